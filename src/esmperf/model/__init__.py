"""Scaling models of a study over ranks: the series and quantities of a store (series), fitted
by Extra-P (extrap_fit), predicted and put in words (predict); docs/predict.md."""
