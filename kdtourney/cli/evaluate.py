"""The commands that evaluate a bot change: `sprt` (is it stronger?) and `tune` (SPSA tuning of
its parameters, and the verify of the tuned values)."""
# The library is imported inside the commands: `kdtourney --help` imports no numba or pandas.

import shlex

import click

from kdtourney.cli.group import harness_errors
from kdtourney.cli.options import (
    MAX_GAMES,
    RULE_PARAMS,
    STORED_PARAMS,
    Number,
    Real,
    given,
    rule_options,
    session_options,
)
from kdtourney.cli.session import (
    open_session,
    setup_options,
    table_options,
    workers_ahead,
    write_report,
)
from kdtourney.errors import UserError

SPRT_PARAMS = ("candidate", "baseline", "elo0", "elo1", "alpha", "beta", "players", *RULE_PARAMS,
               *STORED_PARAMS)
TUNE_PARAMS = ("bot", "param", "players", "iterations", "against", "batch", "blocks",
               *RULE_PARAMS, *STORED_PARAMS)


@click.command("sprt")
@click.option("--candidate", metavar="SPEC", help="The bot under test, e.g. mcts:iterations=2000.")
@click.option("--baseline", metavar="SPEC", help="The bot it is compared with, e.g. "
              "mcts:iterations=1000; it takes all the other seats.")
@click.option("--elo0", type=Real(), default=0.0, show_default=True,
              help="H0: the candidate is not more than ELO0 stronger.")
@click.option("--elo1", type=Real(), default=10.0, show_default=True,
              help="H1: the candidate is at least ELO1 stronger (ELO1 > ELO0).")
@click.option("--alpha", type=Real(), default=0.05, show_default=True,
              help="At most this chance of accepting H1 when the candidate is no more than "
              "ELO0 stronger, in (0, 0.5).")
@click.option("--beta", type=Real(), default=0.05, show_default=True,
              help="At most this chance of accepting H0 when the candidate is ELO1 stronger or "
              "more, in (0, 0.5).")
@click.option("--players", metavar="2|3|4", help="Table size (default 2): the candidate and "
              "PLAYERS-1 baselines.")
@click.option("--max-games", type=Number(int, maximum=MAX_GAMES), default=20_000,
              show_default=True,
              help="Stop undecided after this many games (rounded up to whole blocks).")
@rule_options
@session_options(
    "Test", seed="Seed of the deals", name_default="sprt, the bots",
    resume="Continue the test stored in DIR (--max-games may change its cap).",
    last_line="verdict line")
@click.pass_context
def sprt_command(ctx, **opts):
    """Sequential A/B test: is --candidate more than --elo0 Elo stronger than --baseline? `H1
    accepted` says it is; `H0 accepted` says it is not shown to be --elo1 stronger (not that it
    is no stronger).

    Plays duplicate blocks (one deal under every rotation of the table: the candidate and
    PLAYERS-1 baselines) in chunks, and after each chunk runs a generalized SPRT on the block
    scores (the candidate's pairwise score against the baseline seats) over the complete blocks in
    block order. It stops at the first block where the log-likelihood ratio leaves its bounds, and
    the last line says `H1 accepted: ...`, `H0 accepted: ...`, or `undecided after N games ...` at
    --max-games, with the Elo estimate corrected for the stopping. The decision and the block
    where it falls depend only on the seed and the test, not on --workers: blocks that the last
    chunk played past the decision are stored but not counted.

    Exit status 0 for all three verdicts (each is a result), 2 for bad input, 130 when
    interrupted. Every game is stored in DIR/tournament.sqlite with the test and its LLR path
    (table sprt), then the report DIR/index.html is written. Re-running the same command on the
    same --out, or --resume DIR, continues from the stored blocks and reaches the same decision.
    """
    workers_ahead(opts)
    from kdtourney.commands import sprt as sequential
    from kdtourney.terminal.display import SprtDisplay
    from kdtourney.tournament.sprt import with_cap

    def load(folder):
        tournament, test, stored_meta = sequential.load_test(folder)
        if given(ctx, "max_games"):
            tournament = with_cap(tournament, opts["max_games"])
        return (tournament, test), tournament, stored_meta

    def prepare(found, seed):
        tournament, test = sequential.prepare_test(
            found, candidate=opts["candidate"], baseline=opts["baseline"],
            elo0=opts["elo0"], elo1=opts["elo1"], alpha=opts["alpha"], beta=opts["beta"],
            players=opts["players"], max_games=opts["max_games"], seed=seed,
            **table_options(opts))
        return (tournament, test), tournament

    folder, (tournament, test), found, settings, meta = open_session(
        ctx, opts, params=SPRT_PARAMS, plays="continues the stored test", what="test",
        load=load, prepare=prepare, prefix="sprt-")
    with harness_errors(folder):
        outcome = sequential.play_sprt(tournament, test, folder, found, meta=meta,
                                       display=SprtDisplay(quiet=opts["quiet"]),
                                       **setup_options(opts, settings))
    stored = outcome.state.stored
    if outcome.interrupted:
        click.echo(f"interrupted: {outcome.verdict_line()}; {stored} games stored in {folder}; "
                   f"continue with: kdtourney sprt --resume {shlex.quote(str(folder))}", err=True)
        ctx.exit(130)
    shown = write_report(folder, opts["no_report"])
    if not opts["quiet"]:
        past = outcome.past_decision
        click.echo(f"{shown}: {stored} games stored" + (f" ({outcome.played} played now)"
                                                         if outcome.stored_before else "")
                   + (f"; {past} played past the decision are not counted" if past else ""))
    click.echo(outcome.verdict_line())


def verify_test(opts):
    """The SPRT of --verify-elo0/--verify-elo1 (checked before the tune plays), or None for a
    verify of a fixed number of games."""
    from kdtourney.commands import tune as tuning

    named = [f"--verify-{k}" for k in ("elo0", "elo1", "alpha", "beta")
             if opts[f"verify_{k}"] is not None]
    if not named:
        return None
    if opts["verify_elo0"] is None and opts["verify_elo1"] is None:
        raise UserError(f"{named[0]} is for a sequential verify: give --verify-elo0 and "
                        "--verify-elo1 as well")
    if not opts["verify"]:
        raise UserError(f"{named[0]} makes --verify N an SPRT of at most N games: give "
                        "--verify N as well")
    defaults = {"elo0": 0.0, "elo1": 10.0, "alpha": 0.05, "beta": 0.05}
    return tuning.verify_test(**{k: d if opts[f"verify_{k}"] is None else opts[f"verify_{k}"]
                                 for k, d in defaults.items()})


def play_verify(opts, test, found, table, tuned, start, folder, meta, options):
    """The tuned spec against the start spec in FOLDER/verify: --verify N games, or an SPRT of
    at most N games (`test`); its verdict."""
    from kdtourney.commands import tune as tuning
    from kdtourney.terminal.display import SprtDisplay
    from kdtourney.terminal.progress import Reporter

    with harness_errors(folder):
        if test is None:
            return tuning.verify(found, table, tuned, start, opts["verify"], folder, meta=meta,
                                 reporter=Reporter(quiet=opts["quiet"]), **options)
        return tuning.verify_sprt(found, table, tuned, start, opts["verify"], folder, test,
                                  meta=meta, display=SprtDisplay(quiet=opts["quiet"]),
                                  **options)


@click.command("tune")
@click.argument("bot", metavar="BOT[:key=value...]", required=False)
@click.option("--param", multiple=True, metavar="NAME=START,MIN,MAX[,C_END[,R_END]]",
              help="A parameter to tune (repeatable). Defaults: C_END (the perturbation at the "
              "end) = (MAX-MIN)/20; R_END (the learning rate at the end) such that theta+ "
              "scoring 75% at every iteration would move the parameter across its range over the "
              "run. An int parameter takes whole values, rounded at random.")
@click.option("--players", metavar="2|3|4", help="Table size (default 2): theta+, theta- and "
              "PLAYERS-2 --against opponents.")
@click.option("--iterations", type=Number(int, maximum=MAX_GAMES), default=1000, show_default=True,
              help="SPSA iterations; each plays --blocks duplicate blocks.")
@click.option("--against", metavar="SPEC[,SPEC]", help="The other seats at 3 or 4 players: one "
              "spec for all, or one per seat (default: BOT at its start values).")
@click.option("--batch", type=Number(int), default=16, show_default=True,
              help="Iterations played at once from the same values (the values then depend on "
              "the seed only, not on --workers).")
@click.option("--blocks", type=Number(int), default=1, show_default=True,
              help="Duplicate blocks (deals under every rotation) per iteration.")
@click.option("--verify", type=Number(int, maximum=MAX_GAMES), metavar="N",
              help="At the end, play the tuned values against the start values over N games "
              "(rounded up to whole deals) and print the gain with its 95% interval; with "
              "--verify-elo0/--verify-elo1, over at most N games, stopping as `kdtourney sprt` "
              "does.")
@click.option("--verify-elo0", type=Real(), metavar="ELO0",
              help="Make --verify an SPRT (as `kdtourney sprt --elo0`, the tune the candidate, "
              "its start values the baseline): H0, the tune is not more than ELO0 stronger "
              "[default: 0].")
@click.option("--verify-elo1", type=Real(), metavar="ELO1",
              help="Make --verify an SPRT: H1, the tune is at least ELO1 stronger [default: 10].")
@click.option("--verify-alpha", type=Real(), metavar="ALPHA",
              help="The verify SPRT's --alpha [default: 0.05].")
@click.option("--verify-beta", type=Real(), metavar="BETA",
              help="The verify SPRT's --beta [default: 0.05].")
@rule_options
@session_options(
    "Tune", seed="Seed of the deals and perturbations", name_default="tune, the bot",
    resume="Continue the tune stored in DIR.", last_line="tuned spec")
@click.pass_context
def tune_command(ctx, **opts):
    """Tune BOT's numeric parameters by play (SPSA, as fishtest and OpenBench): every iteration
    perturbs all the --param values at once by +-c_k, plays theta+ against theta- on duplicate
    deals, and steps the values along theta+'s score.

    Prints the tuned values as a bot spec at the end; DIR/tune.html shows every parameter's path
    and the schedules; every game and iteration is stored in DIR/tournament.sqlite. Re-running the
    same command on the same --out, or --resume DIR, continues and ends at the same values.
    """
    workers_ahead(opts)
    from kdtourney.commands import tune as tuning
    from kdtourney.report.tune_page import write_tune_page
    from kdtourney.terminal.display import TuneDisplay

    def load(folder):
        table, tune, stored_meta = tuning.load_tune(folder)
        return (table, tune), table, stored_meta

    def prepare(found, seed):
        table, tune = tuning.prepare_tune(
            found, opts["bot"], opts["param"], players=opts["players"],
            iterations=opts["iterations"], against=opts["against"], seed=seed,
            batch=opts["batch"], blocks=opts["blocks"], **table_options(opts))
        return (table, tune), table

    test = verify_test(opts)
    folder, (table, tune), found, settings, meta = open_session(
        ctx, opts, params=TUNE_PARAMS, plays="continues the stored tune", what="tune",
        load=load, prepare=prepare, prefix="tune-")
    options = setup_options(opts, settings)
    with harness_errors(folder):
        outcome = tuning.play_tune(table, tune, folder, found, meta=meta,
                                   display=TuneDisplay(quiet=opts["quiet"]), **options)
    if outcome.interrupted:
        click.echo(f"interrupted after {outcome.state.done} of {tune.schedule.iterations} "
                   f"iterations ({outcome.state.stored} games stored in {folder}); continue with: "
                   f"kdtourney tune --resume {shlex.quote(str(folder))}", err=True)
        ctx.exit(130)
    page = write_tune_page(folder)
    if not opts["no_report"]:
        write_report(folder, False)
    if not opts["quiet"]:
        click.echo(f"{page}: {outcome.state.stored} games, {tune.schedule.iterations} iterations"
                   + (f" ({outcome.played} games played now)" if outcome.stored_before else "")
                   + f"; the bots thought for {outcome.decision_seconds:.0f} s in all")
        click.echo(f"tuned values: {tuning.values_text(tune, outcome.theta)} "
                   f"(start: {tuning.values_text(tune, tune.start)})")
    start = tune.spec(tune.start)
    if opts["verify"] and outcome.tuned_spec() == start:
        click.echo("the tune ended at its start values: nothing to verify")
    elif opts["verify"]:
        verdict = play_verify(opts, test, found, table, outcome.tuned_spec(), start, folder,
                              meta, options)
        if verdict.interrupted:
            click.echo(f"interrupted while verifying: re-run the command to finish ({folder}/"
                       f"{tuning.VERIFY_DIR} keeps the games played)", err=True)
            ctx.exit(130)
        click.echo(verdict.line())
    click.echo(outcome.tuned_spec())


COMMANDS = (sprt_command, tune_command)
