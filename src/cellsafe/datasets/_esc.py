"""A built-in stand-in for the ESC substitute (ESCsub) of documents 003 and 000.

:func:`esc_like` returns a :class:`~cellsafe.table.CountTable` with the shape of the English
School Census substitute used in the empirical studies of 003 (section 4.1, Tables 1-2) and
000 (section 4.1): geography (326) x ethnicity (20) x sex (4) x age (19) x language (7),
K = 3,468,640 cells, about 8.19 million pupils, and the cell-size distribution of 003 Table 2.

The counts are drawn from a fixed generating model with real two-way associations, so that
log-linear analyses of the table find structure.  The model is a stand-in: it is not the ESC,
nor the ESCsub, and its categories are plausible labels, not the data's.

The model's expected counts are computed once (deterministically, from a fixed internal seed for
the area-level effects) and cached; ``rng`` only drives the count draws.
"""

from __future__ import annotations

from functools import lru_cache
import numpy as np

from .._random import RNGLike, as_generator
from ..table import CountTable, Variable

__all__ = ["esc_like", "esc_like_expected", "esc_like_variables"]

#: Number of pupils in the ESCsub (003 section 4.1); the expected total of :func:`esc_like`.
N_PUPILS = 8_190_870

#: 326 areas (the number of English local authority districts in 2011).
_N_AREAS = 326

#: Ethnicity: the 18 main ethnic-group codes of the school census, plus refused and not obtained.
_ETHNICITY = (
    "WBRI", "WIRI", "WIRT", "WROM", "WOTH",  # White: British, Irish, Traveller of Irish heritage, Gypsy/Roma, other
    "MWBC", "MWBA", "MWAS", "MOTH",  # Mixed: White and Black Caribbean, White and Black African, White and Asian, other
    "AIND", "APKN", "ABAN", "AOTH",  # Asian: Indian, Pakistani, Bangladeshi, other
    "BCRB", "BAFR", "BOTH",  # Black: Caribbean, African, other
    "CHNE", "OOTH",  # Chinese, any other ethnic group
    "REFU", "NOBT",  # refused, information not obtained
)  # fmt: skip
#: National shares of the ethnic groups.
_ETHNICITY_SHARE = np.array(
    [0.700, 0.003, 0.0007, 0.002, 0.055, 0.014, 0.006, 0.011, 0.018, 0.027,
     0.040, 0.016, 0.017, 0.012, 0.034, 0.006, 0.004, 0.017, 0.008, 0.010]
)  # fmt: skip
#: How strongly each group concentrates in diverse (urban) areas (0 for White British).
_ETHNICITY_URBAN = np.array(
    [0.0, 0.6, 0.2, 0.8, 1.0, 1.0, 1.2, 0.9, 1.0, 1.1,
     1.1, 1.3, 1.2, 1.5, 1.5, 1.4, 1.0, 1.2, 0.5, 0.6]
)  # fmt: skip
#: Share of each group whose first language is other than English.
_ETHNICITY_OTHER_LANGUAGE = np.array(
    [0.004, 0.05, 0.10, 0.80, 0.70, 0.03, 0.10, 0.12, 0.15, 0.70,
     0.75, 0.85, 0.75, 0.02, 0.60, 0.20, 0.65, 0.60, 0.25, 0.30]
)  # fmt: skip
#: Relative age profile of each group (minority groups are younger on average).
_ETHNICITY_YOUTH = 0.25 * (_ETHNICITY_URBAN > 0)

_SEX = ("F", "M", "Unknown", "Invalid")
_SEX_SHARE = np.array([0.4935, 0.5035, 0.002, 0.001])

_AGE = tuple(str(a) for a in range(2, 21))
_AGE_SHARE = np.array(
    [0.002, 0.035, 0.070, 0.074, 0.074, 0.073, 0.072, 0.071, 0.070, 0.069,
     0.069, 0.069, 0.068, 0.067, 0.066, 0.031, 0.027, 0.004, 0.0015]
)  # fmt: skip

#: First language: English, believed English, other than English, believed other than
#: English, not obtained, refused, invalid code.
_LANGUAGE = ("ENG", "ENB", "OTH", "OTB", "NOT", "REF", "INV")

# ---------------------------------------------------------------------------- calibrated constants
# Calibrated offline (tests/datasets/_calibrate_esc_like.py) so that the expected cell-size
# distribution matches 003 Table 2; see the Notes of esc_like.
_STRUCTURE_SEED = 20220  # fixed seed of the area-level effects (part of the model, not of rng)
_AREA_SIGMA = 0.888  # sd of log area size
_DIVERSITY_SIGMA = 1.743  # sd of the areas' diversity scores
_AREA_ETHNICITY_SIGMA = 0.871  # sd of the area x ethnic-group random interaction
_AREA_LANGUAGE_SIGMA = 0.245  # sd of the area x language random interaction
_AREA_AGE_SIGMA = 0.08  # sd of the area x age random interaction
_SCALE = 1.011  # multiplies the whole linear predictor (sharpens or flattens every effect)
_PHI = 0.389  # variance of the gamma cell multiplier (cell-level overdispersion)
_PAIRS = 0.027  # share of cells whose pupils are counted in pairs


def esc_like_variables() -> tuple[Variable, ...]:
    """The variables of :func:`esc_like`, in table order.

    Returns
    -------
    tuple of Variable
        geography (326: ``'G001'`` .. ``'G326'``), ethnicity (20 school-census codes), sex (4),
        age (19: ``'2'`` .. ``'20'``) and language (7 first-language codes).

    Examples
    --------
    >>> [(v.name, v.size) for v in esc_like_variables()]
    [('geography', 326), ('ethnicity', 20), ('sex', 4), ('age', 19), ('language', 7)]
    """
    return (
        Variable("geography", [f"G{i:03d}" for i in range(1, _N_AREAS + 1)]),
        Variable("ethnicity", _ETHNICITY),
        Variable("sex", _SEX),
        Variable("age", _AGE),
        Variable("language", _LANGUAGE),
    )


def _language_given_ethnicity() -> np.ndarray:
    """P(language | ethnicity), a 20 x 7 matrix whose rows sum to one."""
    other = _ETHNICITY_OTHER_LANGUAGE
    p = np.empty((other.size, len(_LANGUAGE)))
    p[:, 1] = 0.012 * (1.0 - other)  # believed English
    p[:, 2] = 0.95 * other  # other than English
    p[:, 3] = 0.02 * other  # believed other than English
    p[:, 4] = 0.004  # not obtained
    p[:, 5] = 0.001  # refused
    p[:, 6] = 0.002  # invalid code
    p[_ETHNICITY.index("REFU"), 5] = 0.05  # who refuse one item often refuse another
    p[_ETHNICITY.index("NOBT"), 4] = 0.08
    p[:, 0] = 1.0 - p[:, 1:].sum(axis=1)
    return p


def _log_softmax(x: np.ndarray, axis: int) -> np.ndarray:
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


def _linear_predictor(
    area_sigma: float = _AREA_SIGMA,
    diversity_sigma: float = _DIVERSITY_SIGMA,
    area_ethnicity_sigma: float = _AREA_ETHNICITY_SIGMA,
    area_language_sigma: float = _AREA_LANGUAGE_SIGMA,
    area_age_sigma: float = _AREA_AGE_SIGMA,
) -> np.ndarray:
    """Dense 5-way array of the unnormalised log expected counts (main effects + two-way terms)."""
    gen = np.random.Generator(np.random.PCG64(_STRUCTURE_SEED))
    n_g, n_e, n_a, n_l = _N_AREAS, len(_ETHNICITY), len(_AGE), len(_LANGUAGE)
    z_size = gen.standard_normal(n_g)
    z_div = gen.standard_normal(n_g)
    z_ge = gen.standard_normal((n_g, n_e))
    z_gl = gen.standard_normal((n_g, n_l))
    z_ga = gen.standard_normal((n_g, n_a))

    log_size = area_sigma * z_size
    log_size[:2] = np.log([0.02, 0.05])  # two very small areas: 1/50 and 1/20 of the median size
    # ethnicity | area: national shares tilted by the area's diversity, plus group clustering
    urban = _ETHNICITY_URBAN
    t_ge = np.log(_ETHNICITY_SHARE) + diversity_sigma * z_div[:, None] * urban
    t_ge += area_ethnicity_sigma * z_ge * (urban > 0)
    t_ge = _log_softmax(t_ge, axis=1) + log_size[:, None]
    # age profile, younger for minority groups; area x age variation (school provision)
    centred_age = (np.arange(n_a) - 9.0) / 9.0
    t_ea = np.log(_AGE_SHARE) - _ETHNICITY_YOUTH[:, None] * centred_age
    t_ga = area_age_sigma * z_ga
    t_gea = t_ge[:, :, None] + t_ea[None, :, :] + t_ga[:, None, :]
    # language | ethnicity, and by age: the youngest more often believed / not obtained
    t_el = np.log(_language_given_ethnicity())
    young = np.clip(3.0 - np.arange(n_a), 0.0, None)
    old = np.clip(np.arange(n_a) - 13.0, 0.0, None)
    t_al = np.zeros((n_a, n_l))
    t_al[:, 1] += 0.3 * young
    t_al[:, 3] += 0.3 * young
    t_al[:, 4] += 0.4 * young
    t_al[:, 2] += 0.1 * old
    # sex: unknown or invalid more often recorded for nursery-age children
    t_sa = np.log(_SEX_SHARE)[:, None] + np.outer([0.0, 0.0, 1.0, 0.5], 0.3 * young)
    t_gl = area_language_sigma * z_gl

    eta = np.empty((n_g, n_e, len(_SEX), n_a, n_l))
    np.add(t_gea[:, :, None, :, None], t_sa[None, None, :, :, None], out=eta)
    eta += t_el[None, :, None, None, :]
    eta += t_al[None, None, None, :, :]
    eta += t_gl[:, None, None, None, :]
    return eta


@lru_cache(maxsize=1)
def _expected_counts() -> np.ndarray:
    """Flat (row-major) expected counts mu of the generating model; they sum to N_PUPILS. Read-only."""
    eta = _linear_predictor().reshape(-1)
    eta *= _SCALE
    eta -= eta.max()
    mu = np.exp(eta, out=eta)
    mu *= N_PUPILS / mu.sum()
    mu.setflags(write=False)
    return mu


def _draw_counts(mu: np.ndarray, gen: np.random.Generator) -> np.ndarray:
    """Counts given the expected counts: gamma-Poisson, with a share of cells counted in pairs."""
    lam = gen.gamma(1.0 / _PHI, _PHI, size=mu.size)
    lam *= mu
    lam *= N_PUPILS / lam.sum()  # the multipliers' total is random; rescale so that E(total) = n
    pairs = gen.random(mu.size) < _PAIRS
    lam[pairs] *= 0.5
    counts = gen.poisson(lam)
    counts[pairs] *= 2
    return counts


def _build(gen: np.random.Generator) -> CountTable:
    counts = _draw_counts(_expected_counts(), gen)
    index = np.flatnonzero(counts)
    return CountTable(esc_like_variables(), index, counts[index])


@lru_cache(maxsize=8)
def _esc_like_seeded(seed: int) -> CountTable:
    return _build(as_generator(seed))


def esc_like(rng: RNGLike = 0) -> CountTable:
    """A table shaped like the ESC substitute (ESCsub) of documents 003 and 000.

    Five variables, in this order: geography (326 areas), ethnicity (20), sex (4), age (19)
    and language (7); K = 3,468,640 cells, about 8,190,870 pupils, about 90% zero cells and a
    heavy tail of small counts, as in 003 Tables 1-2.  The table is a **stand-in** generated
    from a statistical model, not the real ESC or ESCsub data; its category labels are
    plausible codes, not the data's.

    Parameters
    ----------
    rng : int, SeedSequence, Generator or None, default 0
        Drives the count draws.  The same ``rng`` gives the same table; the expected counts
        (the model) do not depend on it.  Tables for int seeds are cached (a few are kept);
        :class:`CountTable` is immutable, so sharing them is safe.

    Returns
    -------
    CountTable
        Integer counts, no structural zeros.

    See Also
    --------
    esc_like_variables : the variables and their categories.
    esc_like_expected : the model's expected counts mu, as a float table.

    Notes
    -----
    The expected counts follow a log-linear model with two-way terms only, over geography (g),
    ethnicity (e), sex (s), age (a) and language (l),

    .. math::

        \\log \\mu_{gesal} = c\\,(u_{ge} + u_{ea} + u_{ga} + u_{el} + u_{al} + u_{gl} + u_{sa}) + b,

    with the main effects absorbed in the two-way terms and b set so that the mu sum to
    n = 8,190,870.  Area sizes are log-normal (sd 0.89, two very small areas); ethnicity given
    area tilts national shares by an area diversity score and an area x group random effect;
    language given ethnicity is strong (e.g. 0.4% of White British pupils but 85% of
    Bangladeshi pupils have a first language other than English); age shifts language (more
    "believed" and "not obtained" at nursery ages), sex (unknown or invalid codes more common
    at nursery ages) and ethnicity (minority groups younger); areas vary a little in age and
    language.  The area-level effects are drawn once from a fixed internal seed, so they are
    part of the model.

    Counts are then drawn cell by cell: a gamma multiplier G ~ Gamma(mean 1, variance
    phi = 0.389) adds cell-level overdispersion (the heavy tail of small counts), the products
    mu G are rescaled to sum to n, and f ~ Poisson(mu G); in a share w = 0.027 of cells, chosen
    at random, pupils are counted in pairs, f = 2 Poisson(mu G / 2).  The pairs reproduce the
    excess of even over odd counts in 003 Table 2 ((k + 1) tau2(k + 1) / tau2(k) rises in
    alternately large and small steps), which a smooth mixture of Poisson counts does not
    give.  The scale c, phi, w and the sds of the area effects were calibrated offline
    (``tests/datasets/_calibrate_esc_like.py``) so that the expected shares tau2(k),
    k = 0, ..., 10 and k >= 11, are within 4.1% of 003 Table 2; ``esc_like(0)`` is within
    4.3%, its total within 0.02% of n and its 338,301 non-zero cells within 1.4% of the
    published 333,660.

    Examples
    --------
    >>> t = esc_like()
    >>> t.shape
    (326, 20, 4, 19, 7)
    >>> t.n_cells
    3468640
    >>> abs(t.total / 8_190_870 - 1) < 0.01
    True
    """
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool) and rng >= 0:
        return _esc_like_seeded(int(rng))
    return _build(as_generator(rng))


def esc_like_expected() -> CountTable:
    """The expected counts mu of the model behind :func:`esc_like`, as a float table.

    Every cell is non-zero (3,468,640 cells, about 55 MB); the counts sum to 8,190,870.
    Useful as the known truth when checking log-linear fits to :func:`esc_like` tables.

    Returns
    -------
    CountTable
        Float counts on :func:`esc_like_variables`.

    Examples
    --------
    >>> round(esc_like_expected().total)
    8190870
    """
    mu = _expected_counts()
    return CountTable(esc_like_variables(), np.arange(mu.size, dtype=np.int64), mu)
