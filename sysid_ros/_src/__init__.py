"""The machinery behind ``sysid_ros``'s public API (``import sysid_ros``; its ``__all__``).

Nothing here is public: modules, names and layout may change without notice. The subpackages
are layered, lowest first, as test/test_layers.py states and checks.
"""
