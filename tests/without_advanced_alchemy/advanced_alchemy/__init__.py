"""advanced-alchemy as a user's install has it: absent. On the path of every process the suite starts.

Litestar imports advanced-alchemy (and SQLAlchemy with it) at start-up whenever it is installed (`litestar.pagination`):
1.1 to 1.3 s of CPU for each app, worker and CLI process the tests start. Only our dev extras install it, for the
SQLAlchemy host of `tests/host/test_adoption_fullstack.py`, whose processes set their own `PYTHONPATH` and see it.
"""

raise ImportError("advanced_alchemy is left out of the processes the tests start (tests/without_advanced_alchemy)")
