"""The TF1 runtime for unmodified programs: TF1's ``tensorflow`` and
``tensorflow.contrib`` for a program's own files (``tf1compat run``).
"""
