"""compare's splits: forward-chaining in time, grouped, and the bad input around them."""

import numpy as np
import pytest

from skembed.model_selection import compare_embedders, leaderboard
from skembed.model_selection._split import SplitSpec, make_folds, split_column

pd = pytest.importorskip("pandas")


def test_forward_folds_by_hand_with_ties_on_one_side_of_each_cut():
    # sorted times 1 2 2 3 4 5: TimeSeriesSplit(2) cuts before positions 2 and 4; the first
    # cut would part the two rows of time 2, so it moves to the nearer end of their run
    spec = SplitSpec("time", "day", np.array([3.0, 1.0, 2.0, 2.0, 4.0, 5.0]))
    folds, words = make_folds(spec, 2, "regression", np.zeros(6))
    assert [(tr.tolist(), te.tolist()) for tr, te in folds] == [
        ([1], [0, 2, 3]),
        ([0, 1, 2, 3], [4, 5]),
    ]
    assert words.startswith("2 forward-chaining folds by 'day'")


@pytest.mark.parametrize("seed", range(5))
def test_every_forward_fold_scores_rows_strictly_later_than_its_training_rows(seed):
    rng = np.random.default_rng(seed)
    times = rng.integers(0, 40, size=300).astype(float)  # many ties
    folds, _ = make_folds(SplitSpec("time", "t", times), 5, "regression", np.zeros(300))
    assert len(folds) >= 4
    covered = np.concatenate([test for _, test in folds])
    assert len(np.unique(covered)) == len(covered)  # each row scored at most once
    for train, test in folds:
        assert times[train].max() < times[test].min()
        assert set(train) == set(np.flatnonzero(times < times[test].min()))  # all of the past


def _drifting_table(n_weeks=30, per_week=8, seed=0):
    """A label that is constant within a week and random across weeks; 'week' names it.

    Shuffled folds see every week in training, so the one-hot week predicts the label;
    forward folds score weeks never seen, where the week tells nothing.
    """
    rng = np.random.default_rng(seed)
    label_of_week = rng.permutation(np.repeat(["a", "b"], n_weeks // 2))
    week = np.repeat(np.arange(n_weeks), per_week)
    frame = pd.DataFrame(
        {
            "week": [f"w{w}" for w in week],
            "noise": rng.normal(size=len(week)),
            "day": week * 7 + rng.integers(0, 7, size=len(week)),
        }
    )
    return frame, label_of_week[week]


def test_a_planted_time_trend_rewards_shuffled_folds_and_not_forward_ones():
    frame, y = _drifting_table()
    shuffled = compare_embedders(frame.drop(columns="day"), y, ["raw"], cv=4)
    forward = compare_embedders(frame, y, ["raw"], cv=4, time_column="day")
    shuffled_score = leaderboard(shuffled)["mean_test_score"].iloc[0]
    forward_score = leaderboard(forward)["mean_test_score"].iloc[0]
    assert shuffled_score > 0.95  # the week stands in for the label
    assert forward_score < 0.7  # unseen weeks: no better than chance
    assert forward.attrs["cv"].startswith("4 forward-chaining folds by 'day'")
    assert "day" not in forward.attrs["roles"]["numeric"]  # the time is not a feature


def test_dates_as_strings_split_in_time_and_rows_without_a_time_are_dropped():
    frame, y = _drifting_table()
    frame["day"] = (pd.Timestamp("2024-01-01") + pd.to_timedelta(frame["day"], "D")).astype(str)
    frame.loc[[3, 10], "day"] = None
    with pytest.warns(UserWarning, match=r"Dropped 2 rows with no 'day'"):
        results = compare_embedders(frame, y, ["raw"], cv=3, time_column="day")
    assert results.attrs["cv"].startswith("3 forward-chaining folds")


def test_group_folds_keep_each_group_whole():
    frame, y = _drifting_table()
    results = compare_embedders(frame, y, ["raw"], cv=3, group_column="week")
    assert results.attrs["cv"] == "3-fold CV grouped by 'week'"
    # no week in training and test: the one-hot week cannot carry the label over
    assert leaderboard(results)["mean_test_score"].iloc[0] < 0.7
    spec = split_column(frame, group_column="week").spec
    folds, _ = make_folds(spec, 3, "classification", y)
    for train, test in folds:
        assert not set(spec.values[train]) & set(spec.values[test])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            dict(time_column="week"),
            r"time column 'week' holds neither numbers nor dates: found 'w0'",
        ),
        (dict(time_column="nope"), r"Split column 'nope' is not in the table"),
        (dict(time_column="day", group_column="week"), r"both given: give one"),
        (dict(group_column="g"), r"group column 'g' has 2 groups, fewer than the 3 folds"),
    ],
)
def test_bad_split_columns_are_refused_naming_the_fix(kwargs, message):
    frame, y = _drifting_table()
    frame["g"] = ["x", "y"] * (len(frame) // 2)
    with pytest.raises(ValueError, match=message):
        compare_embedders(frame, y, ["raw"], cv=3, **kwargs)


def test_three_months_give_two_forward_folds_one_month_each():
    # the loans' issue_month: Jan, Feb, Mar in blocks of unequal size
    times = np.repeat([1.0, 2.0, 3.0], [3395, 2988, 3617])
    folds, _ = make_folds(SplitSpec("time", "month", times), 2, "regression", np.zeros(10000))
    assert [(set(times[tr]), set(times[te])) for tr, te in folds] == [
        ({1.0}, {2.0}),
        ({1.0, 2.0}, {3.0}),
    ]


def test_cuts_that_meet_give_fewer_folds_with_a_warning():
    times = np.repeat([1.0, 2.0, 3.0, 4.0], [30, 1, 1, 68])
    with pytest.warns(UserWarning, match=r"2 forward-chaining folds, not 3"):
        folds, words = make_folds(SplitSpec("time", "t", times), 3, "regression", np.zeros(100))
    assert len(folds) == 2 and words.startswith("2 forward-chaining folds")


def test_too_few_distinct_times_for_the_folds_are_refused():
    spec = SplitSpec("time", "month", np.array([1.0, 1.0, 2.0, 2.0, 3.0, 3.0]))
    with pytest.raises(ValueError, match=r"3 distinct times: 3 forward-chaining folds need"):
        make_folds(spec, 3, "regression", np.zeros(6))


def test_a_training_fold_with_one_class_is_refused():
    spec = SplitSpec("time", "t", np.arange(8.0))
    y = np.array(["a", "a", "a", "b", "a", "b", "a", "b"])
    with pytest.raises(ValueError, match=r"Fold 0's training rows .* hold a single class"):
        make_folds(spec, 3, "classification", y)


def test_a_test_fold_with_classes_its_training_rows_lack_is_said():
    spec = SplitSpec("time", "t", np.arange(9.0))
    y = np.array(["a", "b", "a", "b", "a", "b", "c", "c", "a"])
    with pytest.warns(UserWarning, match=r"Fold 1 scores classes its training rows lack \(c\)"):
        make_folds(spec, 2, "classification", y)
