import numpy as np

from skembed.datasets import load_bbc_news, load_diamonds, load_penguins


def test_bbc_news(bbc_news):
    texts, labels = bbc_news
    assert len(texts) == 2225 and labels.shape == (2225,)
    classes, counts = np.unique(labels, return_counts=True)
    assert classes.tolist() == ["business", "entertainment", "politics", "sports", "tech"]
    assert counts.tolist() == [510, 386, 417, 511, 401]
    assert texts == load_bbc_news()[0]  # stable order


def test_penguins_and_diamonds():
    p = load_penguins()
    assert p.shape == (344, 8) and p["sex"].isna().sum() == 11
    d = load_diamonds()
    assert d.shape == (53940, 10) and "rownames" not in d.columns


def test_tweet_sentiment():
    from skembed.datasets import load_tweet_sentiment

    texts, labels = load_tweet_sentiment()
    assert len(texts) == 38158 and labels.shape == (38158,)
    classes, counts = np.unique(labels, return_counts=True)
    assert classes.tolist() == ["negative", "neutral", "positive"]
    assert counts.sum() == 38158 and counts.min() > 5000
    assert all(isinstance(t, str) for t in texts)
    assert np.median([len(t.split()) for t in texts]) < 30  # short texts


def test_loans_and_movies_are_mixed_tables():
    from skembed.datasets import load_loans, load_movies
    from skembed.model_selection import detect_roles, infer_task

    loans = load_loans()
    assert loans.shape == (10000, 55) and loans["emp_title"].nunique() == 4741
    roles = detect_roles(loans.drop(columns=["interest_rate"]))
    assert roles["text"] == ["emp_title"] and roles["datetime"] == ["issue_month"]
    assert "state" in roles["categorical"] and "annual_income" in roles["numeric"]
    assert infer_task(loans["interest_rate"]) == "regression"
    assert infer_task(loans["grade"]) == "classification"
    movies = load_movies()
    assert movies.shape == (58788, 24) and "rownames" not in movies.columns
    roles = detect_roles(movies.drop(columns=["rating"]))
    assert roles["text"] == ["title"] and "Comedy" in roles["categorical"]
    assert "budget" in roles["numeric"] and infer_task(movies["rating"]) == "regression"
