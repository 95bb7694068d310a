"""The ground floor: errors, parameter and data checks, labels, atomic writes, specs and the
version.  It imports no other floor of ldpest (README, "Layout")."""
