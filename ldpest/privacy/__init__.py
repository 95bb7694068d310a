"""The privacy floor: exact randomness and exact privacy arithmetic (``exact``), integer alias
tables (``alias``), the discrete Laplace law (``discrete_laplace``) and lattice Laplace noise
(``noise``), and the generators (``rng``).  It imports only ``ldpest.util`` (README, "Layout";
docs/privacy.md)."""
