"""Chapter 11 (diffusion) states numbers in its prose; each is the one the chapter's own code computes (issue 42).

The prose is read from the solution notebook and compared with a run of the same drivers on the reference
functions: the exact sampler's spread, the ring model's energy-distance ratios and loss (the integration
check's training, about 5 s of one core), the energy distance's finite-sample floor, the Langevin demo's
counts and the digits' baselines. The digits model's own share (an 18 s training) is printed by its test cell
and compared with the prose when the notebook runs (tests/test_browser.py, the grader); here only the
baselines it is compared with.

A second group feeds plausible mistakes to the PUBLIC part of their test cells (what a student sees) and
checks that they are caught, with a message that names the mistake (the derivation's steps, gaussian_product and
gaussian_score, included). A third reads the release: each derived result (the posterior, the score-noise relation
and what is built on them) sits in a collapsed <details> hint, not in the instructions nor in a stub's docstring.
"""
import re

import numpy as np
import pytest

from autograder.course import Chapter
from dlcourse.drivers import ch11_diffusion as drivers

CHAPTER = "ch11_diffusion"


@pytest.fixture(scope="module")
def ref():
    from autograder.reference import load
    return load(CHAPTER)


@pytest.fixture(scope="module")
def prose():
    cells = Chapter.load(CHAPTER).source.cells
    return " ".join(" ".join(c.source.split()) for c in cells if c.cell_type == "markdown")


def _stated(pattern, prose):
    found = re.search(pattern, prose)
    assert found, f"the sentence stating a number changed ({pattern!r}): update this test"
    return found.groups()


def langevin_sentences(ref):
    """The two sentences of § 6's Langevin demo, from the run of ``langevin_ring`` with the reference pieces."""
    sharp = drivers.nearest_centre_counts(drivers.langevin_ring(ref.langevin_step, ref.gaussian_mixture_score, 0.1))
    wide = drivers.nearest_centre_counts(drivers.langevin_ring(ref.langevin_step, ref.gaussian_mixture_score, 0.5))
    near = int(sharp[0] + sharp[1] + sharp[-1])
    return (sharp, wide,
            f"{near} of the 2000 end on $m_0$ and its two neighbours, {2000 - near} on the other five",
            f"every component ends with between {wide.min()} and {wide.max()} of the 2000")


def test_langevin_demo_shows_what_the_prose_says(ref, prose):
    sharp, wide, sharp_sentence, wide_sentence = langevin_sentences(ref)
    assert sharp_sentence in prose and wide_sentence in prose, (sharp_sentence, wide_sentence)
    assert sharp[2:-1].sum() <= 20 and sharp[0] > 1000  # stuck where they started: few beyond the neighbours
    assert wide.min() >= 2000 / 16  # crossed the gaps: every component gets a fair share


def test_exact_sampler_spread_and_the_energy_distances_are_the_runs(ref, prose):
    run = drivers.diffusion_2d(ref.linear_betas, ref.alpha_bars, ref.q_sample, ref.eps_loss, ref.ddpm_sample,
                               ref.ddim_step, ref.gaussian_mixture_score, T=1000, n_train=2000, n_samples=500,
                               train_steps=2500, hidden=64, ddim_steps=20, exact_sigma=0.005, seed=0)
    centres = drivers.ring_centres()
    exact = run["exact_samples"]
    nearest = ((exact[:, None, :] - centres[None]) ** 2).sum(-1).argmin(1)
    spread = float(np.sqrt(((exact - centres[nearest]) ** 2).mean()) / 0.005)
    (stated_spread,) = _stated(r"The reference: about \$(\d\.\d)\\,\\sigma\$, narrower than the components", prose)
    assert stated_spread == f"{spread:.1f}", (stated_spread, spread)
    assert spread < 1  # "narrower than the components"

    X, held_out = drivers.ring_data(2000, 0), drivers.ring_data(500, 1)
    gauss = np.random.default_rng(7).multivariate_normal(X.mean(0), np.cov(X.T), 500)
    baseline = drivers.energy_distance(gauss, held_out)
    ratios = {"ddpm": drivers.energy_distance(run["samples"], held_out) / baseline,
              "ddim": drivers.energy_distance(run["ddim_samples"], held_out) / baseline,
              "floor": drivers.energy_distance(drivers.ring_data(500, 3), held_out) / baseline}
    loss = float(np.mean(run["losses"][-200:]))
    ddpm, ddim = _stated(r"\(reference: about (\d\.\d\d) and (\d\.\d\d) of it\)", prose)
    (floor,) = _stated(r"a fresh sample of 500 true ring points scores about (\d\.\d\d) of the Gaussian's", prose)
    (stated_loss,) = _stated(r"reference about (\d\.\d\d); predicting 0 scores 1", prose)
    for stated, computed in ((ddpm, ratios["ddpm"]), (ddim, ratios["ddim"]), (floor, ratios["floor"]),
                             (stated_loss, loss)):
        assert abs(float(stated) - computed) <= 0.011, (stated, computed, ratios, loss)  # torch's last digit may vary
    assert ratios["ddim"] > ratios["ddpm"] > ratios["floor"]  # "DDIM lands farther from the data than DDPM"
    assert "under-dispers" not in prose  # the claim the run contradicted (issue 42)


def test_digits_baselines_are_the_runs(prose):
    from dlcourse.data import digits_split
    classify = drivers.digit_classifier()
    encode, decode = drivers.digits_latent()
    gaussian = float(np.mean(classify(decode(np.random.default_rng(7).standard_normal((200, 16))))[1] > 0.7))
    real = float(np.mean(classify(decode(encode(digits_split()[1])))[1] > 0.7))
    _, stated_gaussian, stated_real = _stated(
        r"The reference: about (\d+) % against (\d+) % for the Gaussian; real test "
        r"digits \(held out[^)]*\) passed through the same 16 components: (\d+) %", prose)
    assert (stated_gaussian, stated_real) == (f"{100 * gaussian:.0f}", f"{100 * real:.0f}")


def test_claims_no_run_computes_are_gone(prose):
    """Issue 42: sentences the chapter never computed, or its run contradicted."""
    for phrase in ("turns every sample into saturated noise", "learns slowly", "unrecognisable well before",
                   "Why does the cosine schedule help", "slightly under-disperses", "0.36/0.8 eps_hat"):
        assert phrase not in prose, phrase
    tests = {gid: c.source for gid, c in Chapter.load(CHAPTER).test_cells().items()}
    assert "0.36/0.8 eps_hat" not in tests["test_ddpm_step"]


def test_integration_checks_name_the_split_they_judge_on():
    tests = Chapter.load(CHAPTER).test_cells()
    public = {gid: tests[gid].source.split("### BEGIN HIDDEN TESTS")[0] for gid in tests}
    titles = re.findall(r'with check\("([^"]*)"', public["test_integration_ring"].replace('"\n           "', ""))
    assert len(titles) == 3 and "no data" in titles[0] and all(t.startswith("held-out") for t in titles[1:]), titles
    assert "training digits" in public["test_integration_digits"] and "held-out test digits" in \
        public["test_integration_digits"]


# ------------------------------------------------------------------ the public checks catch the mistakes

CAUGHT_PUBLICLY = [("q_sample", "modifies_x0_in_place", "x0 (q_sample's input) was modified"),
                   ("q_posterior", "no_broadcast_over_rows", "t = (1, 0, 1)"),
                   ("q_posterior", "python_if_at_t0", "t = (1, 0, 1)"),
                   ("ddim_step", "python_if_for_minus_one", "t_prev = (0, -1, 1)"),
                   ("ddim_step", "prev_not_broadcast", "t_prev = (0, -1, 1)"),
                   ("gaussian_mixture_score", "not_stabilised", "Subtract the LARGEST logit"),
                   ("gaussian_mixture_score", "shifted_by_smallest_logit", "Subtract the LARGEST logit"),
                   # the derivation's steps (issue 42): the message names the wrong term
                   ("gaussian_product", "variances_added", "variances added instead of precisions"),
                   ("gaussian_product", "mean_not_weighted_by_precision", "mean not weighted by precision"),
                   ("gaussian_product", "weighted_by_variances", "weighted by the variances instead of the precisions"),
                   ("gaussian_product", "precision_returned_as_variance", "the product's precision"),
                   ("gaussian_product", "divides_by_a_zero_variance", "dividing by a variance 0"),
                   ("gaussian_score", "sign_flipped", "wrong sign of the score"),
                   ("gaussian_score", "divided_by_std", "divided by the standard deviation"),
                   ("gaussian_score", "not_divided_by_var", "not divided by the variance"),
                   ("score_from_eps", "sign_flipped", "wrong sign of the score"),
                   ("score_from_eps", "missing_square_root", "divides eps_hat by 1 - abar_t"),
                   ("q_posterior", "likelihood_mean_not_rescaled", "centred where sqrt(alpha_t) x_{t-1} = x_t"),
                   ("q_posterior", "likelihood_variance_beta", "variance beta_t only as a density of x_t")]


@pytest.mark.parametrize("function, mistake, named", CAUGHT_PUBLICLY, ids=[f"{f}-{m}" for f, m, _ in CAUGHT_PUBLICLY])
def test_the_public_check_catches_the_mistake_and_names_it(function, mistake, named):
    from autograder.quickcheck import run_test_cell
    from autograder.reference import namespace
    from autograder.tests.mutants import load
    from dlcourse.testing import CheckFailed
    source = Chapter.load(CHAPTER).test_cells()[f"test_{function}"].source.split("### BEGIN HIDDEN TESTS")[0]
    ns = namespace(CHAPTER, {function: load(CHAPTER)[function][mistake]})
    assert run_test_cell(namespace(CHAPTER), source) is None  # the reference passes the public part
    try:
        exec(compile(source, "<public checks>", "exec"), dict(ns))
    except CheckFailed as failure:
        message = str(failure)  # "description: reason", as the student's kernel and the grader word it
    else:
        pytest.fail(f"the public checks of {function} pass with the mistake {mistake!r}")
    assert named in message, message
    if mistake == "modifies_x0_in_place":  # the mutation is reported, not the values it produced
        assert "square root" not in message and "abar[t - 1]" not in message, message


def test_schedule_and_code_facts_are_the_functions(ref, prose):
    """§ 2: the linear schedule's last abar is about 4e-5 and it is near 0 over the last third; § 8: the 16
    components keep about the stated share of the training digits' variance."""
    from dlcourse.data import digits_split
    abar = ref.alpha_bars(ref.linear_betas(1000))
    assert "\\bar\\alpha_{T-1}\\approx e^{-10} \\approx 4\\cdot10^{-5}" in prose and f"{abar[-1]:.0e}" == "4e-05"
    assert "near 0 for the whole last third" in prose and abar[667] < 0.02
    X = digits_split()[0].reshape(-1, 64).astype(float)
    s = np.linalg.svd(X - X.mean(0), compute_uv=False)
    (stated,) = _stated(r"the first 16 principal components of the training digits \(about (\d+) % of their variance\)",
                        prose)
    assert stated == f"{100 * (s[:16] ** 2).sum() / (s ** 2).sum():.0f}"


# ------------------------------------------------------------------ derived, not transcribed (issue 42)

# What the student derives: each result sits in a collapsed <details> hint of the release, nowhere else in its
# prose; compared with spaces and thin spaces (\\,) removed.
DERIVED_RESULTS = [
    r"\frac{\sqrt{\bar\alpha_{t-1}}\,\beta_t}{1-\bar\alpha_t}",            # the posterior mean (§ 3)
    r"\frac{1-\bar\alpha_{t-1}}{1-\bar\alpha_t}\,\beta_t",                  # its variance
    r"\frac{1-\bar\alpha_t}{\beta_t(1-\bar\alpha_{t-1})}",                   # its precision
    r"\frac{m_1 v_2 + m_2 v_1}{v_1 + v_2}", r"\frac{v_1 v_2}{v_1 + v_2}",       # gaussian_product
    r"\frac1v = \frac{1}{v_1} + \frac{1}{v_2}", "var1 * var2 / (var1 + var2)",
    r"x_t/\sqrt{\alpha_t}", r"(\beta_t/\alpha_t) I",                           # step 2's factor
    r"-\frac{x - m}{v}", "-(x - mean) / var",                                    # gaussian_score
    r"-\frac{\varepsilon}{\sqrt{1-\bar\alpha_t}}", "-eps_hat / np.sqrt(1 - a)",  # score_from_eps
    r"-\frac{\varepsilon_\theta(x_t, t)}{\sqrt{1-\bar\alpha_t}}",
    r"\frac{x_t - \sqrt{1-\bar\alpha_t}\,\hat\varepsilon}{\sqrt{\bar\alpha_t}}",  # predict_x0
    r"\frac{\beta_t}{\sqrt{1-\bar\alpha_t}}",                                  # the DDPM step's mean
    r"\sqrt{\bar\alpha_{t'}}\,\hat x_{-1} + \sqrt{1-\bar\alpha_{t'}}\,\hat\varepsilon",  # ddim_step
    r"\sum_k w_k(x)\,\frac{m_k - x}{\sigma^2}",                                  # the mixture's score
]
# The same results as the exercises' docstrings used to print them (a stub keeps its docstring).
DERIVED_CODE = ["-eps_hat / sqrt", "(xt - sqrt(1 - abar_t) eps_hat) / sqrt(abar_t)", "beta_t / sqrt(1 - abar_t)",
                "sqrt(abar_{t_prev}) x0_hat", "beta_t / (1 - abar_t)", "-(x - mean) / var", "var1 * var2",
                "1 / var1 + 1 / var2"]


def _squeezed(text):
    return re.sub(r"\s+|\\,", "", text)


def _outside_details(markdown):
    return re.sub(r"<details>.*?</details>", "", markdown, flags=re.S)


def test_derived_results_are_only_in_collapsed_hints():
    """Issue 42: the release's prose gives the route to the posterior, the score-noise relation and the results
    built on them (predict_x0, the DDPM mean, DDIM, the mixture's score); the results are one click away in a
    <details> hint, never in the instructions nor in the stubs' docstrings."""
    import nbformat

    from autograder.course import release_path
    release = nbformat.read(str(release_path(CHAPTER)), as_version=4)
    markdown = [c.source for c in release.cells if c.cell_type == "markdown"]
    hints = _squeezed(" ".join(re.findall(r"<details>.*?</details>", "\n".join(markdown), flags=re.S)))
    shown = _squeezed(" ".join(_outside_details(m) for m in markdown))
    assert "<details>" not in shown and "</details>" not in shown  # every hint is closed
    for formula in DERIVED_RESULTS:
        assert _squeezed(formula) in hints, f"no hint states {formula!r}"
        assert _squeezed(formula) not in shown, f"the instructions state {formula!r}"
    stubs = " ".join(c.source for c in release.cells if c.cell_type == "code"
                     and c.metadata.get("nbgrader", {}).get("solution"))
    for code in DERIVED_CODE:
        assert code not in stubs, f"a stub's docstring states {code!r}"
    for name in ("gaussian_product", "gaussian_score"):  # the derivation's steps are exercises of their own
        assert f"def {name}(" in stubs and f"`{name}(" in " ".join(markdown)
