"""A ledger of the epsilon each user has spent (docs/accounting.md, "A privacy ledger").

Pure epsilon-LDP composes sequentially: the reports one user made together are (sum of their
epsilons)-LDP.  The ledger adds them up per user and per period (day, week, month, year, or all
time), and refuses a report that would take a user past the budget of its period, as Apple's
deployment caps the epsilon spent per day.

Memoised reports (a :class:`ldpest.Longitudinal` mechanism privatised with a client state) are
post-processing of one permanent response per value: ``m`` reports of one value cost
``min(m epsilon_1, epsilon_inf)`` together, never more, so a report is charged the increase
``min((m + 1) e_1, e_inf) - min(m e_1, e_inf)`` and reports of an unchanged value stop costing
once ``epsilon_inf`` is reached.  (The permanent response is memoised for all time, so its cap
counts across periods; the charges fall in the periods of the reports.)  Values are recorded as
keyed hashes (HMAC-SHA256 with the ledger's own random salt), never as themselves.

Budgets are compared with a relative tolerance of 1e-12, so sixteen reports at epsilon 1 fit a
budget of 16 whatever the order of the float additions.

The file is JSON, written atomically; :func:`ledger_transaction` holds an exclusive lock on
``<ledger>.lock`` from reading to writing, so two writers cannot lose each other's charges.
"""

from __future__ import annotations

import contextlib
import datetime as _datetime
import hashlib
import hmac
import json
import secrets
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..contract.base import Mechanism
from ..contract.longitudinal import Longitudinal
from ..util.atomic import atomic_path
from ..util.errors import DataError, ParameterError

LEDGER_FORMAT = "ldpest-ledger"
PERIODS = ("day", "week", "month", "year", "all")
TOLERANCE = 1e-12


def period_of(when, per: str) -> str:
    """The label of the period holding ``when`` (a datetime, date or ISO string; UTC)."""
    if per not in PERIODS:
        raise ParameterError(f"per must be one of {', '.join(PERIODS)}, got {per!r}")
    if per == "all":
        return "all"
    if isinstance(when, str):
        try:
            when = _datetime.datetime.fromisoformat(when)
        except ValueError:
            raise ParameterError(f"the time {when!r} is not an ISO date (e.g. 2026-12-04 or 2026-12-04T10:00)") \
                from None
    if isinstance(when, _datetime.datetime) and when.tzinfo is not None:
        when = when.astimezone(_datetime.UTC)
    if per == "day":
        return when.strftime("%Y-%m-%d")
    if per == "week":
        year, week, _ = when.isocalendar()
        return f"{year}-W{week:02d}"
    return when.strftime("%Y-%m" if per == "month" else "%Y")


@dataclass(frozen=True)
class Charges:
    """What a batch of reports would cost (:meth:`Ledger.charges`): per record its ``charge`` and
    whether it is ``allowed``; the ``refused`` users with what they would have ``spent``."""

    period: str
    budget: float
    charge: np.ndarray
    allowed: np.ndarray
    users: np.ndarray
    keys: np.ndarray | None
    scope: str | None
    refused: dict[str, float]

    def message(self) -> str:
        """One line naming the refused users (up to three) and their would-be spending."""
        shown = ", ".join(f"{user!r} ({spent:.6g})" for user, spent in list(self.refused.items())[:3])
        more = f" and {len(self.refused) - 3} more" if len(self.refused) > 3 else ""
        return (f"{len(self.refused)} user(s) would exceed the budget of {self.budget:g} for {self.period}: "
                f"{shown}{more}; no report made for them")


class Ledger:
    """Epsilon spent per user and period (module docstring).  ``Ledger.open(path)`` reads the file
    or starts an empty ledger; :meth:`charges` prices a batch; :meth:`record` books the allowed
    part; :meth:`save` writes the file atomically."""

    def __init__(self, document: dict | None = None, path=None):
        self.document = document or {"format": LEDGER_FORMAT, "version": 1, "salt": secrets.token_hex(16),
                                     "spent": {}, "reports": {}, "memo": {}}
        self.path = None if path is None else Path(path)

    @classmethod
    def open(cls, path) -> Ledger:
        path = Path(path)
        if not path.exists() or path.stat().st_size == 0:
            return cls(path=path)
        try:
            document = json.loads(path.read_text())
            if document.get("format") != LEDGER_FORMAT:
                raise ValueError(f"format is {document.get('format')!r}, not {LEDGER_FORMAT!r}")
            for part in ("spent", "reports", "memo", "salt"):
                document[part]  # noqa: B018 - every part must be there
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise DataError(f"{path}: not an ldpest ledger ({exc})") from None
        return cls(document, path)

    # -- queries -------------------------------------------------------------------------------------
    def spent(self, user, period: str | None = None) -> float | dict[str, float]:
        """The epsilon ``user`` spent in ``period`` (a label such as ``"2026-12-04"``), or per period."""
        periods = self.document["spent"].get(str(user), {})
        return dict(periods) if period is None else float(periods.get(period, 0.0))

    def table(self):
        """Every (user, period) with its epsilon and number of reports, as a pandas DataFrame."""
        import pandas as pd

        rows = [(user, period, epsilon, self.document["reports"].get(user, {}).get(period, 0))
                for user, periods in self.document["spent"].items() for period, epsilon in periods.items()]
        return pd.DataFrame(rows, columns=["user", "period", "epsilon", "reports"])

    # -- charging ------------------------------------------------------------------------------------
    def value_keys(self, scope: str, values) -> np.ndarray:
        """Keyed hashes of the values (one HMAC per distinct value): what the ledger stores of them."""
        salt = bytes.fromhex(self.document["salt"])
        labels, inverse = np.unique(np.asarray(values).astype(str), return_inverse=True)
        digests = np.array([hmac.new(salt, f"{scope}\x00{label}".encode(), hashlib.sha256).hexdigest()[:32]
                            for label in labels.tolist()], dtype=object)
        return digests[inverse.ravel()]

    def charges(self, mechanism: Mechanism, users, values=None, *, budget: float, per: str = "day", at=None,
                memoised: bool = False) -> Charges:
        """Price reports of ``mechanism`` by ``users`` (one per record) at time ``at`` (default now,
        UTC): each record's charge, and which users stay within ``budget`` for the period.  A user
        who would exceed it gets no report at all in this batch.  ``memoised`` (a longitudinal
        mechanism privatised with a client state) charges reports of one value up to epsilon_inf
        only; it needs ``values``."""
        import pandas as pd

        budget = float(budget)
        if not budget > 0 or not np.isfinite(budget):
            raise ParameterError(f"budget must be a positive number, got {budget!r}")
        period = period_of(at if at is not None else _datetime.datetime.now(_datetime.UTC), per)
        users = np.asarray(users).astype(str).astype(object)
        if users.ndim != 1 or len(users) == 0:
            raise DataError("the ledger needs one user per record")
        epsilon = mechanism.epsilon
        keys = scope = None
        if memoised:
            if not isinstance(mechanism, Longitudinal):
                raise ParameterError(f"{mechanism.name!r} has no permanent response to memoise")
            if values is None or len(values) != len(users):
                raise DataError("memoised charges need the value of each record")
            scope = mechanism.memo_scope
            keys = self.value_keys(scope, values)
            frame = pd.DataFrame({"user": users, "key": keys})
            distinct = frame.drop_duplicates()
            memo = self.document["memo"]
            distinct = distinct.assign(prior=[memo.get(user, {}).get(scope, {}).get(key, 0)
                                              for user, key in distinct.itertuples(index=False)])
            before = frame.merge(distinct, on=["user", "key"], how="left")["prior"].to_numpy() + \
                frame.groupby(["user", "key"]).cumcount().to_numpy()
            cap = mechanism.epsilon_inf
            charge = np.minimum((before + 1) * epsilon, cap) - np.minimum(before * epsilon, cap)
        else:
            charge = np.full(len(users), epsilon)
        spent = self.document["spent"]
        new = pd.Series(charge).groupby(users).sum()
        previous = np.array([float(spent.get(user, {}).get(period, 0.0)) for user in new.index])
        total = previous + new.to_numpy()
        over = total > budget * (1 + TOLERANCE)
        refused = dict(zip(new.index[over].tolist(), total[over].tolist(), strict=True))
        allowed = ~pd.Series(users).isin(refused).to_numpy()
        return Charges(period, budget, charge, allowed, users, keys, scope, refused)

    def record(self, charges: Charges) -> None:
        """Book the allowed records of ``charges``."""
        import pandas as pd

        ok = charges.allowed
        users = charges.users[ok]
        spent, reports = self.document["spent"], self.document["reports"]
        totals = pd.Series(charges.charge[ok]).groupby(users).agg(["sum", "size"])
        for user, (amount, count) in zip(totals.index.tolist(), totals.to_numpy().tolist(), strict=True):
            periods = spent.setdefault(user, {})
            periods[charges.period] = periods.get(charges.period, 0.0) + amount
            counted = reports.setdefault(user, {})
            counted[charges.period] = counted.get(charges.period, 0) + int(count)
        if charges.keys is not None:
            memo = self.document["memo"]
            pairs = pd.Series(1, index=pd.MultiIndex.from_arrays([users, charges.keys[ok]])).groupby(level=[0, 1]).sum()
            for (user, key), count in pairs.items():
                values = memo.setdefault(user, {}).setdefault(charges.scope, {})
                values[key] = values.get(key, 0) + int(count)

    def save(self, path=None) -> None:
        target = Path(path) if path is not None else self.path
        if target is None:
            raise ParameterError("this ledger has no file: give save(path)")
        with atomic_path(target) as tmp:
            tmp.write_text(json.dumps(self.document, indent=1, sort_keys=True) + "\n")
        self.path = target


@contextlib.contextmanager
def ledger_transaction(path):
    """Open the ledger at ``path`` under an exclusive lock (``<path>.lock``), yield it, and save it
    only if the block succeeds: another writer waits for the lock and then reads these charges."""
    import fcntl

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            ledger = Ledger.open(path)
            yield ledger
            ledger.save(path)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def privatize_accounted(mechanism: Mechanism, encoded, users, *, ledger=None, budget: float | None = None,
                        per: str = "day", at=None, state=None, rng="secure", write=None):
    """Privatise encoded records by ``users``: memoised with the client state file ``state`` (a
    longitudinal mechanism), charged to the ledger file ``ledger`` against ``budget`` per ``per``;
    users who would exceed their budget get no report.  ``write(reports)`` runs before the client
    state and the ledger are saved (the CLI writes its temporary report file there, and moves it
    into place after: a failure never leaves reports that the ledger has not counted).  Returns
    ``(reports, Charges or None)``; raises DataError when every user is refused."""
    from ..privacy.memo import ClientState

    if ledger is not None and budget is None:
        raise ParameterError("a ledger needs a budget (the epsilon each user may spend per period)")
    if state is not None and not isinstance(mechanism, Longitudinal):
        raise ParameterError(f"a client state memoises permanent responses; {mechanism.name!r} has none "
                             "(use rappor, l-grr, l-osue or dbitflip)")
    users = np.asarray(users).astype(str).astype(object)
    if users.ndim != 1 or len(users) != len(encoded):
        raise DataError(f"users must name the user of each of the {len(encoded)} records, got {len(users)}")
    client = None if state is None else ClientState.open(state)
    book = ledger_transaction(ledger) if ledger is not None else contextlib.nullcontext(None)
    with book as accounts:
        charges, keep = None, slice(None)
        if accounts is not None:
            charges = accounts.charges(mechanism, users, encoded, budget=budget, per=per, at=at,
                                       memoised=client is not None)
            if not charges.allowed.any():
                raise DataError(charges.message() + "; nothing written")
            keep = charges.allowed
        if client is not None:
            reports = mechanism.privatize_memoised_encoded(encoded[keep], users[keep], client, rng)
        else:
            reports = mechanism.privatize_encoded(encoded[keep], rng)
        if write is not None:
            write(reports)
        if accounts is not None:
            accounts.record(charges)
        if client is not None and client.changed:
            client.save()
    return reports, charges
