"""From a store to words and figures: analysis, figures, findings (ranked, and what a
comparison can show: significance), the HTML report (html), the seeds' claims (seed_*) and the
comparison of two stores (compare)."""
