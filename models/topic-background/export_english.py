"""English word frequencies for the topic background (see README.md).

Writes english.tsv: every English word that wordfreq rates at Zipf 3.0 or more (about once in
a million words or more often), one per line as `word<TAB>zipf` with two decimals, most frequent
first. Run with the pinned requirements: `python export_english.py > english.tsv`.
"""
import sys

import wordfreq

MIN_ZIPF = 3.0

for word in wordfreq.top_n_list("en", 200_000, wordlist="best"):
    zipf = wordfreq.zipf_frequency(word, "en", wordlist="best")
    if zipf < MIN_ZIPF:
        break
    if not any(ch.isalpha() for ch in word):
        continue
    sys.stdout.write(f"{word}\t{zipf:.2f}\n")
