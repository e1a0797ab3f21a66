"""A pytest plugin (``-p slim_repair_plugin``) that repairs tf-slim's data API before
tf-slim's own tests are collected; used by test_slim_wheel.py."""

import tf1compat

tf1compat.patch_tf_slim()
