"""A truth-table corpus of verify-block idioms (`idioms.py`) and the plans built from it (`plans.py`)."""
