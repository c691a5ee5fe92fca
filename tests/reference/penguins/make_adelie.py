"""Make adelie.csv: the Adelie penguins of course 002, section 4.1.

Run once from this folder with the ``palmerpenguins`` package installed
(``pip install palmerpenguins``); the tests read the committed CSV, never the package.
"""

from palmerpenguins import load_penguins

penguins = load_penguins()
adelie = penguins.loc[penguins["species"] == "Adelie", ["species", "sex", "bill_length_mm", "flipper_length_mm"]]
adelie = adelie.dropna().reset_index(drop=True)
adelie["flipper_length_mm"] = adelie["flipper_length_mm"].astype("int64")  # whole millimetres in the source
assert len(adelie) == 146 and (adelie["sex"].value_counts() == 73).all()
adelie.to_csv("adelie.csv", index=False)
