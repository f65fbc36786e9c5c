# Conveniences around the README's two commands (which need only bash).
.PHONY: setup test demo bench

setup:
	@bash scripts/setup.sh

test:
	@bash scripts/test.sh

demo:
	@bash scripts/demo.sh

bench: setup
	@.venv/bin/python -m bench.run_all
