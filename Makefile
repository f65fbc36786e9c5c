# The two commands the README opens with. Both run the idempotent set-up first.
.PHONY: setup test demo bench

setup:
	@bash scripts/setup.sh

test: setup
	@bash scripts/run_tests.sh

demo: setup
	@bash scripts/run_demo.sh

bench: setup
	@.venv/bin/python -m bench.run_all
