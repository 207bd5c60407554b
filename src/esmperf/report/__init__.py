"""From a store to words and figures: analysis, figures, findings, the HTML report (html), the
seeds' claims (seed_*) and the comparison of two stores (compare)."""
