"""The build directory: written atomically and marked as fabricgen's (`output.py`), read back and
verified against its manifest (`build_dir.py`), and the secrets that stand in it as placeholders
until push fills them (`secrets.py`).
"""
