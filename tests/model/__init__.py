"""A model-based test of Director as a whole (issue 32).

Generated plans (`plans`), generated operator sequences (`actions`) run against the real CLI (`operator`), a
small model of the world as the oracle (`oracle`, with `world` reading the truth from files, sockets and
/proc), and the promises checked after every step (`invariants`). `driver.run_sequence` ties them together;
tests/test_model_based.py runs it in the suite and bench/soak_model.py at length.
"""
