"""Non-neural teachers whose predictions become extra training targets."""
from __future__ import annotations

from typing import Callable

import numpy as np
from scipy.sparse import hstack
from sklearn.feature_extraction.text import TfidfVectorizer
from scipy.sparse import csr_matrix
from sklearn.linear_model import Ridge

import data


def ridge_va(train, extra_texts: list[str], dev, log: Callable[[str], None]) -> np.ndarray:
    """TF-IDF (words 1-2 + characters 2-5) ridge regression on EmoBank train; alpha picked on EmoBank
    dev. Returns its (valence, arousal) for `extra_texts`, on the model's output scales. A linear model
    over many sparse features is the strongest valence/arousal predictor at this data size, and its
    labels on ~55k more texts let the small network branch learn from more wording."""
    texts = [t for t, _, _ in train]
    y = np.array([data.va_target(v, a) for _, v, a in train])
    words = TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True, lowercase=True)
    chars = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 5), min_df=3, sublinear_tf=True,
                            max_features=100_000)
    feats = lambda ts, fit=False: hstack([  # noqa: E731
        words.fit_transform(ts) if fit else words.transform(ts),
        chars.fit_transform(ts) if fit else chars.transform(ts)]).tocsr()
    x = feats(texts, fit=True)
    xd = feats([t for t, _, _ in dev])
    yd = np.array([data.va_target(v, a) for _, v, a in dev])
    best = None
    for alpha in (1.0, 3.0, 10.0):
        model = Ridge(alpha=alpha).fit(x, y)
        p = model.predict(xd)
        r = [float(np.corrcoef(p[:, j], yd[:, j])[0, 1]) for j in range(2)]
        log(f"ridge va teacher alpha {alpha}: EmoBank dev r valence {r[0]:.3f} arousal {r[1]:.3f}")
        if best is None or sum(r) > best[0]:
            best = (sum(r), model)
    assert best is not None
    return np.clip(best[1].predict(feats(extra_texts)), [-1.0, 0.0], [1.0, 1.0])


def token_ridge(train, dev, encode, vocab: int, log: Callable[[str], None]):
    """Closed-form ridge over the model's own token ids (idf-weighted, L2-normalised per text), so it
    can run inside the ONNX graph as two lookup tables (model.BagRidge). Returns (U, S, b) and a
    predict function; alpha is picked on EmoBank dev."""
    def counts(rows):
        r, c = [], []
        for i, (t, _, _) in enumerate(rows):
            for x in encode(t)[1:]:  # [CLS] carries nothing
                r.append(i)
                c.append(x)
        return csr_matrix((np.ones(len(r)), (r, c)), shape=(len(rows), vocab))

    xtr = counts(train)
    df = np.asarray((xtr > 0).sum(0)).ravel()
    idf = np.log((1 + len(train)) / (1 + df)) + 1.0
    idf[:3] = 0.0  # [PAD], [UNK], [CLS]: no weight, no norm

    def feats(x):
        norm = np.sqrt(np.asarray(x.multiply(idf[None, :] ** 2).sum(1)).ravel() + 1e-6)
        return csr_matrix(x.multiply(idf[None, :]).multiply(1.0 / norm[:, None]))

    y = np.array([data.va_target(v, a) for _, v, a in train])
    yd = np.array([data.va_target(v, a) for _, v, a in dev])
    xd = feats(counts(dev))
    # alpha per output: valence wants less shrinkage than arousal
    w = np.zeros((vocab, 2))
    b = np.zeros(2)
    best = [-1.0, -1.0]
    for alpha in (0.3, 1.0, 3.0):
        model = Ridge(alpha=alpha).fit(feats(xtr), y)
        p = model.predict(xd)
        r = [float(np.corrcoef(p[:, j], yd[:, j])[0, 1]) for j in range(2)]
        log(f"token ridge alpha {alpha}: EmoBank dev r valence {r[0]:.3f} arousal {r[1]:.3f}")
        for j in range(2):
            if r[j] > best[j]:
                best[j] = r[j]
                w[:, j] = model.coef_[j]
                b[j] = model.intercept_[j]
    u = (w * idf[:, None]).astype(np.float32)
    s = (idf ** 2)[:, None].astype(np.float32)
    b = b.astype(np.float32)
    return u, s, b
