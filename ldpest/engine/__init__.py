"""The engine floor: the functions users call (``api``: ``mechanism`` with ``"auto"``,
``estimate``), streaming report files (``streaming``), Dask map-reduce and schedulers
(``mapreduce``), the file pipelines of the CLI and R (``pipeline``), planning and choosing
frequency oracles (``planning``) and simulation studies (``simulate``).  It imports every floor
below it, up to ``ldpest.io`` (README, "Layout")."""
