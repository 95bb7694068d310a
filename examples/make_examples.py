"""Regenerate the bundled example data (seeded, so the files are reproducible).

* survey-reports.csv: answers to "How do you usually get to work?" from 5000
  people, each privatised on their own device with randomized response at
  epsilon = 1 (categories car, bus, bike, walk). Only the reports are kept.
"""

from pathlib import Path

import numpy as np

import ldpest

HERE = Path(__file__).resolve().parent
CATEGORIES = ["car", "bus", "bike", "walk"]
TRUE_SHARES = [0.45, 0.25, 0.2, 0.1]


def main() -> None:
    rng = np.random.default_rng(2026)
    answers = rng.choice(CATEGORIES, size=5000, p=TRUE_SHARES)
    mech = ldpest.mechanism("randomized-response", epsilon=1.0, categories=CATEGORIES)
    reports = mech.privatize(answers, rng=rng)
    rows = ["respondent,transport"] + [f"{i + 1},{label}" for i, label in enumerate(reports.labels())]
    (HERE / "survey-reports.csv").write_text("\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
