"""From a store to words and figures: analysis (groups and comparisons) and profile_data (the
stored profiles), the figures (figures, scaling_figures, profile_charts; which a group gets:
group_figures), findings (ranked, and what a comparison can show: significance), the HTML
report (html, its sections: html_sections), the seeds' claims (seed_*) and the comparison of
two stores (compare)."""
