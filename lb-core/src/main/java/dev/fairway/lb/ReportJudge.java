package dev.fairway.lb;

/**
 * How much a target's load reports count: the trust model, in one unit, apart from the record that
 * stores the measurements ({@link TargetLoad}) and the pickers that read the result. The strategies
 * that compare calls in flight (least connections, power of two choices) are the ones that read
 * reports, through {@link FleetLoad#load}; the others, least queueing included, do not read them.
 *
 * <p><b>The model.</b> By Little's law, this balancer's own calls at a target average {@code n =
 * rate x latency} (its answers per second there, over the last {@value #WINDOW_SECONDS} s, times their
 * latency), and the target's whole fleet holds {@code f} calls, as its reports say. In a fleet every
 * honest target shows about the same ratio {@code f / n}: the fleet's traffic over ours, the
 * balancer-wide {@link #scale} (1 for a lone client, about the number of clients for a fleet of like
 * clients). It is the trust-weighted average of every report's own ratio, so each target weighs in
 * as often as it answers and only as far as it is believed. A target's trust is how well its own
 * ratio agrees with the scale, {@code min(r, scale) / max(r, scale)}, moved a quarter of the way
 * there on each report: a report that disagrees fades, it never flips the target to distrusted.
 * Least connections counts a target at {@code trust x} its reported count plus {@code (1 - trust) x}
 * what our own traffic implies ({@code scale x n}, never below our own calls): so a liar is counted
 * by what the fleet's calls there must be, on the same scale as the honest targets, instead of at
 * our own one or two calls (which drew a whole fleet onto it), and a target that says too much is
 * not frozen out either. Trust starts at 0 (like gRPC's weighted round robin, a report counts only
 * after it has been seen to agree), and everything expires: the rate decays when answers stop, so a
 * target nobody calls is counted at our own calls again and gets calls (never frozen out), and a
 * report is read for {@link TargetLoad#REPORT_TTL_NANOS} only.
 *
 * <p>One report is a plain lie: a count below our own calls at the target ({@link
 * Verdict#IMPLAUSIBLE}); it is counted in {@code fairway.load.reports{result=implausible}}, and like
 * every count it is read as no fewer calls than ours, in the ratio that moves the trust as in the
 * count a strategy compares ({@link FleetLoad#inFlight}).
 *
 * <p>Thread safety: lock-free; the fields are racy read-modify-writes like the latency EWMA (a lost
 * update, never a corrupt value). Nothing here runs on the pick path: the strategies read the
 * result through {@link FleetLoad#load}, which reads fields and allocates nothing.
 */
final class ReportJudge {
  /** What a report told a judge: {@link #judge}. */
  enum Verdict {
    /** Its ratio is within a factor {@link #AGREEMENT_FACTOR} of the scale: the target's trust rises. */
    AGREES,
    /** Its ratio is further from the scale: the target's trust fades. */
    DISAGREES,
    /**
     * Its count is below our own calls there, beyond what calls on the wire explain ({@link
     * #IN_TRANSIT_SHARE}): a lie about ours, counted as implausible. The trust moves as for any
     * report, with the count read as our own.
     */
    IMPLAUSIBLE,
    /** Nothing to compare it with yet (no count, or no own traffic measured): nothing changes. */
    UNJUDGED
  }

  /**
   * Besides the answered call, one in this many of our calls at the target may be unknown to it
   * without its report being a lie: sent but not yet read by the target, or answered but not yet
   * read by us.
   */
  static final int IN_TRANSIT_SHARE = 8;
  /** The window of the answer rate: reports expire, and so does what our own traffic says. */
  static final int WINDOW_SECONDS = 5;
  static final long WINDOW_NANOS = WINDOW_SECONDS * 1_000_000_000L;
  /** Decay steps per nanosecond of {@link #WINDOW_NANOS}, for {@link TargetLoad#decay}. */
  static final double WINDOW_STEPS_PER_NANO = (double) TargetLoad.DECAY_STEPS_PER_TAU / WINDOW_NANOS;
  /** A target's trust moves this share of the way to each report's agreement. */
  static final double TRUST_STEP = 0.25;
  /** The averages of a target's count and latency move this share of the way per report. */
  static final double AVERAGE_STEP = 1.0 / 8;
  /** The scale moves this share, times the reporting target's trust, per report. */
  static final double SCALE_STEP = 1.0 / 16;
  /** A verdict of {@link Verdict#AGREES} when the ratio is within this factor of the scale. */
  static final double AGREEMENT_FACTOR = 2.0;

  /** The fleet's calls per call of ours at a target, as trusted reports say; 0 until the first report. */
  private volatile double scale;

  double scale() {
    return scale;
  }

  /**
   * Judges a report of {@code requestsInFlight} calls at {@code t} (NaN when the report had no count)
   * arriving at {@code nowNanos} on the answer to a call of {@code latencyNanos}; {@code own} is our
   * calls at the target, the answered one included. Updates the target's averages and trust and the
   * scale; returns what the report told ({@link Verdict#IMPLAUSIBLE} whether or not there was
   * enough to judge its ratio by).
   */
  Verdict judge(TargetLoad t, double requestsInFlight, int own, long nowNanos, long latencyNanos) {
    t.recordAnswer(nowNanos, latencyNanos);
    if (!(requestsInFlight >= 0) || requestsInFlight == Double.POSITIVE_INFINITY) {
      return Verdict.UNJUDGED;
    }
    boolean implausible = requestsInFlight < own - 1 - own / IN_TRANSIT_SHARE;
    // The fleet's calls there at the answer, ours included: a server may or may not count the
    // answered call, and a count below ours is a lie about ours, so never below ours.
    double fleet = Math.max(requestsInFlight, own);
    double average = t.judgedFleet;
    t.judgedFleet = average == 0 ? fleet : average + AVERAGE_STEP * (fleet - average);
    double ours = t.ownCalls(nowNanos);
    if (!(ours > 0)) {
      return implausible ? Verdict.IMPLAUSIBLE : Verdict.UNJUDGED;
    }
    double ratio = t.judgedFleet / ours;
    double s = scale;
    double trust = t.trust;
    if (s == 0) {
      s = ratio;
    } else {
      s += SCALE_STEP * (0.5 + 0.5 * trust) * (ratio - s);
    }
    scale = s;
    double agreement = Math.min(ratio, s) / Math.max(ratio, s);
    t.trust = trust + TRUST_STEP * (agreement - trust);
    if (implausible) {
      return Verdict.IMPLAUSIBLE;
    }
    return agreement * AGREEMENT_FACTOR >= 1 ? Verdict.AGREES : Verdict.DISAGREES;
  }
}
