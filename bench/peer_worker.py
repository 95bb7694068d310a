"""Times one peer library on one task; runs inside bench/.peers (see peers.py).

Input: a JSON task {"peer", "mechanism", "n", "d", "epsilon", "seed"} (and "split": true for the
separate privatise / estimate times of bench_oracles.py).
Output: one JSON line {"seconds": privatise+estimate, "estimate": [...]}
(with "split": {"privatize": seconds, "estimate": seconds}, or null if the peer lacks the protocol).
Each peer is used as its documentation shows: one client call per record.
"""

import json
import sys
import time
import warnings

import numpy as np

warnings.filterwarnings("ignore")


def pure_ldp(mechanism, data, d, epsilon):
    if mechanism == "randomized-response":
        from pure_ldp.frequency_oracles.direct_encoding import DEClient as Client
        from pure_ldp.frequency_oracles.direct_encoding import DEServer as Server
    elif mechanism == "unary-encoding":
        from pure_ldp.frequency_oracles.unary_encoding import UEClient, UEServer

        def Client(eps, d, index_mapper):
            return UEClient(eps, d, use_oue=False, index_mapper=index_mapper)

        def Server(eps, d, index_mapper):
            return UEServer(eps, d, use_oue=False, index_mapper=index_mapper)
    elif mechanism == "laplace":  # summation histogram encoding: one-hot + Laplace(2 / epsilon)
        from pure_ldp.frequency_oracles.histogram_encoding import HEClient as Client

        def Server(eps, d, index_mapper):
            from pure_ldp.frequency_oracles.histogram_encoding import HEServer

            return HEServer(eps, d, use_the=False, index_mapper=index_mapper)
    else:
        return None
    identity = lambda v: v  # noqa: E731  (ldpest and numpy get indices 0..d-1 too)
    start = time.perf_counter()
    client, server = Client(epsilon, d, index_mapper=identity), Server(epsilon, d, index_mapper=identity)
    for value in data.tolist():
        server.aggregate(client.privatise(value))
    estimate = server.estimate_all(range(d), suppress_warnings=True) / len(data)
    return time.perf_counter() - start, estimate


def multi_freq_ldpy(mechanism, data, d, epsilon):
    if mechanism == "randomized-response":
        from multi_freq_ldpy.pure_frequency_oracles.GRR import (
            GRR_Aggregator_MI as aggregate,
        )
        from multi_freq_ldpy.pure_frequency_oracles.GRR import GRR_Client as client
    elif mechanism == "unary-encoding":
        from multi_freq_ldpy.pure_frequency_oracles.UE import (
            UE_Aggregator_MI,
            UE_Client,
        )

        def client(value, d, eps):
            return UE_Client(value, d, eps, False)

        def aggregate(reports, d, eps):
            return UE_Aggregator_MI(reports, eps, False)
    elif mechanism == "laplace":  # summation histogram encoding (SHE)
        from multi_freq_ldpy.pure_frequency_oracles.HE import HE_Aggregator_MI
        from multi_freq_ldpy.pure_frequency_oracles.HE import HE_Client as client

        def aggregate(reports, d, eps):
            return HE_Aggregator_MI(reports, d, eps, use_thresh=False)
    else:
        return None
    client(int(data[0]), d, epsilon)  # compile numba outside the timing
    start = time.perf_counter()
    reports = [client(value, d, epsilon) for value in data.tolist()]
    estimate = aggregate(np.array(reports), d, epsilon)
    return time.perf_counter() - start, estimate


def _timed(privatise, estimate, data):
    start = time.perf_counter()
    reports = [privatise(value) for value in data.tolist()]
    middle = time.perf_counter()
    estimate(reports)
    return {"privatize": middle - start, "estimate": time.perf_counter() - middle}


def pure_ldp_split(mechanism, data, d, epsilon):
    """Seconds to privatise and to aggregate + estimate, for the protocols of bench_oracles.py."""
    identity = lambda v: v  # noqa: E731
    if mechanism == "local-hashing":
        from pure_ldp.frequency_oracles.local_hashing import LHClient, LHServer

        client = LHClient(epsilon, d, use_olh=True, index_mapper=identity)
        server = LHServer(epsilon, d, use_olh=True, index_mapper=identity)
    elif mechanism == "hadamard-response":
        from pure_ldp.frequency_oracles.hadamard_response import (
            HadamardResponseClient,
            HadamardResponseServer,
        )

        server = HadamardResponseServer(epsilon, d, index_mapper=identity)
        client = HadamardResponseClient(epsilon, d, server.get_hash_funcs(), index_mapper=identity)
    else:
        return None

    def estimate(reports):
        for report in reports:
            server.aggregate(report)
        return server.estimate_all(range(d), suppress_warnings=True)

    return _timed(client.privatise, estimate, data)


def multi_freq_ldpy_split(mechanism, data, d, epsilon):
    if mechanism == "local-hashing":
        from multi_freq_ldpy.pure_frequency_oracles.LH import (
            LH_Aggregator_MI,
            LH_Client,
        )

        privatise = lambda v: LH_Client(v, d, epsilon, True)  # noqa: E731
        estimate = lambda reports: LH_Aggregator_MI(reports, d, epsilon, True)  # noqa: E731
    elif mechanism == "subset-selection":
        from multi_freq_ldpy.pure_frequency_oracles.SS import (
            SS_Aggregator_MI,
            SS_Client,
        )

        privatise = lambda v: SS_Client(v, d, epsilon)  # noqa: E731
        estimate = lambda reports: SS_Aggregator_MI(np.array(reports), d, epsilon)  # noqa: E731
    else:
        return None
    privatise(int(data[0]))  # compile numba outside the timing
    return _timed(privatise, estimate, data)


def main():
    task = json.loads(sys.argv[1])
    rng = np.random.default_rng(task["seed"])
    data = rng.integers(0, task["d"], task["n"])
    if task.get("split"):
        split = {"pure-ldp": pure_ldp_split, "multi-freq-ldpy": multi_freq_ldpy_split}[task["peer"]]
        print(json.dumps(split(task["mechanism"], data, task["d"], task["epsilon"])))
        return
    run = {"pure-ldp": pure_ldp, "multi-freq-ldpy": multi_freq_ldpy}[task["peer"]]
    out = run(task["mechanism"], data, task["d"], task["epsilon"])
    if out is None:
        print(json.dumps({"seconds": None, "estimate": None}))
        return
    seconds, estimate = out
    print(json.dumps({"seconds": seconds, "estimate": np.asarray(estimate, dtype=float)[:5].tolist()}))


if __name__ == "__main__":
    main()
