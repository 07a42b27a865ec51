package dev.fairway.lb;

import dev.fairway.lb.ReportJudge.Verdict;

/**
 * Least queueing's rules for a load report: whether a report is kept for least queueing's
 * free-worker test, judged against what this balancer sees of the target itself, and when a
 * target's reports are set aside for a while. The rules are stated at {@link #record}; the fields
 * they keep live in {@link TargetLoad} (the report's values, the workers it implies, the row of
 * disagreements, the fallback), and a pick reads only the result. Least connections and power of two
 * choices read reports through {@link ReportJudge} instead. Stateless; called on the report path
 * only ({@link Completions#report}), racy like the EWMA (a lost update, never a corrupt value).
 */
final class ReportPlausibility {
  private ReportPlausibility() {}

  /** What became of a report: {@link #record}'s results. */
  enum Outcome {
    /** Kept: least queueing reads it. */
    KEPT,
    /** Neither value usable: nothing changes. */
    EMPTY,
    /** A lie about our own calls: discarded, and counted. */
    IMPLAUSIBLE,
    /** The target's reports are set aside for a while: discarded unread, and counted. */
    DISTRUSTED
  }

  /**
   * Besides the answering call, one in this many of this balancer's calls on the target may be
   * unknown to the target without the report being a lie: sent but not yet read by the target, or
   * answered but not yet read by this balancer.
   */
  static final int IN_TRANSIT_SHARE = 8;
  /** The implied workers are capped at this many times the most calls this balancer itself had on the target. */
  static final int WORKER_MARGIN = 8;
  /** A call slower than this many times the service time waited in a queue, whatever the report says. */
  static final double WAITED_RATIO = 2.0;
  /** A call slower than this many times the fastest answer of any target, answered with a capped claim of free workers, waited. */
  static final double SLOW_FOR_IDLE_RATIO = 4.0;
  /** Reports in a row that disagree before the target falls back to unreported scoring. */
  static final int DISAGREEMENTS_TO_DISTRUST = 2;
  /** The first fallback lasts this long; each one that follows the last within {@link #DISTRUST_MAX_NANOS}, twice as long. */
  static final long DISTRUST_BASE_NANOS = java.time.Duration.ofSeconds(30).toNanos();
  /** The longest fallback (four minutes: 30 s doubled three times). */
  static final long DISTRUST_MAX_NANOS = java.time.Duration.ofMinutes(4).toNanos();

  /**
   * Least queueing's rules: judges a report from the target at {@code nowNanos}, the answer to a
   * call that took {@code latencyNanos}, against what this balancer sees itself, and keeps it only if
   * it agrees. Least queueing reads what is kept (its free-worker test); least connections and power
   * of two choices read only the fresh count, weighed by {@link ReportJudge}, whose one trust value
   * replaces these rules for them. The rules, all on this path so that a pick reads only the result:
   *
   * <ul>
   *   <li><b>Not fewer calls than ours.</b> Our own calls on the target ({@code own}, the answering
   *       one included) are in flight there. A report whose count (its {@code rif}; a utilization of
   *       0 alone claims 0) is below {@code own - 1 - own / }{@value #IN_TRANSIT_SHARE} is a lie:
   *       the 1 is the answering call, which a server may or may not count, and the eighth is calls
   *       still on the wire. It is discarded ({@link Outcome#IMPLAUSIBLE}).
   *   <li><b>Workers capped.</b> The implied workers (rif / utilization) are at most {@value
   *       #WORKER_MARGIN} x the most of our calls it ever held at a report or the concurrency we
   *       learned, at least {@value #WORKER_MARGIN}: a report of 1e6 or Infinity workers
   *       counts as a few, so once our calls exceed them the target is hot again. Our own counts
   *       only, since a liar's own counts would raise its cap. The margin is wide because in a
   *       fleet each client holds a few of a target's calls (8 workers seen as 1 or 2 of ours).
   *   <li><b>Unverified free workers are ours only.</b> A report that implies more workers than the
   *       cap while claiming fewer calls than the cap ({@link TargetLoad#reportCapped}: its free workers exist
   *       only by the claim) counts as many workers as we ourselves had calls there at a report or
   *       learned, at least 1, for least queueing's free-worker test ({@link TargetLoad#reportedWorkers}); the
   *       capped count only bounds the claim. Why:
   *       every client of a fleet hears the same claim, so 8 x a client's 1 or 2 calls is 7 to 15
   *       free workers in each of 50 clients; in the fleet simulation ({@code PlausibleReportTest})
   *       the liar's queue went from 24 to 96 calls within 3 s on its first reports. An honest
   *       target's report implies its real workers (rif / utilization), which exceed the cap only
   *       when it has more than 8 x the most calls we ever had there: such a target loses its extra
   *       free workers in our count, not its report.
   *   <li><b>Slow for an idle claim.</b> Such a report on an answer slower than {@value
   *       #SLOW_FOR_IDLE_RATIO} x the fastest answer of any target of this balancer ({@code
   *       fastestAnyNanos}) counts no free worker at all (workers = its own count). Not the
   *       target's own fastest answer: in a fleet, a client's first calls to the liar were already
   *       queued (0.5 to 2.9 s per client in the simulation, for a 500 ms service), so its calls
   *       there never looked slow against it. The cost: an honest many-worker target 4 x slower
   *       than the fastest is scored as hot by its count, as a target with no free worker.
   *   <li><b>Free, yet our call waited.</b> A report that claimed a free worker while our call was
   *       waiting for one ({@link #judgeKeptReport}): the call was slower than {@value #WAITED_RATIO}
   *       x the fastest answer the target ever gave us ({@link TargetLoad#fastestNanos}) disagrees: it waited
   *       in a queue the report said was not there. Not the windowed service time: at a target
   *       whose every call queues, that rises to the queued latency. Not the report that answers
   *       the call: an honest queue that drains answers its last calls, which all waited, with
   *       reports of free workers. One such disagreement is normal (another client filled the
   *       target since, or it is slower now), so the report is kept.
   *   <li><b>Repeated disagreement falls back.</b> {@value #DISAGREEMENTS_TO_DISTRUST} discarded or
   *       disagreeing reports in a row (reports that cannot be judged do not break the row), or one
   *       where the report was a capped claim (the answering one on a call that waited, or the one in
   *       hand: a claim of free workers we could not verify, contradicted by our own call), and the target's reports are not used for 30 s, then 60, 120
   *       and at most 240 s if it happens again within 4 minutes of the last fallback's end (as
   *       Envoy's outlier detection lengthens each ejection): it is scored as if it never reported.
   *       Its reports meanwhile are discarded unread ({@link Outcome#DISTRUSTED}); for the
   *       strategies that count calls see {@link ReportJudge}. An agreeing report ends the streak.
   * </ul>
   *
   * <p>NaN or negative values are not kept (the field keeps NaN); a report with neither value
   * changes nothing ({@link Outcome#EMPTY}).
   *
   * {@code fastestAnyNanos} is the fastest answer any target gave this balancer (0 until one did).
   *
   * @return what became of the report
   */
  static Outcome record(TargetLoad t, double utilization, double requestsInFlight, long nowNanos, long latencyNanos,
      long startNanos, int inFlightAtPick, double fastestAnyNanos) {
    boolean u = utilization >= 0 && utilization < Double.POSITIVE_INFINITY;
    boolean r = requestsInFlight >= 0 && requestsInFlight < Double.POSITIVE_INFINITY;
    if (!u && !r) {
      return Outcome.EMPTY;
    }
    if (t.distrustLevel > 0 && nowNanos - t.distrustedUntilNanos < 0) {
      return Outcome.DISTRUSTED;
    }
    int own = t.inFlight;
    double claimed = r ? requestsInFlight : utilization == 0 ? 0 : Double.NaN;
    boolean implausible = claimed < own - 1 - own / IN_TRANSIT_SHARE;
    int peak = t.peakOwnAtReport;
    if (!implausible && own > peak) {
      t.peakOwnAtReport = peak = own;
    }
    double workers = 0;
    double cappedWorkers = 0;
    boolean capped = false;
    if (u && r && utilization > 0 && requestsInFlight > 0) {
      double cap = (double) WORKER_MARGIN * Math.max(1, Math.max(peak, t.learnedConcurrency));
      double implied = requestsInFlight / utilization;
      capped = implied > cap && requestsInFlight < cap;
      cappedWorkers = Math.min(cap, implied);
      workers = capped ? Math.max(1, Math.max(peak, t.learnedConcurrency)) : cappedWorkers;
    }
    double fastest = t.fastestNanos;
    boolean waited = fastest > 0 && latencyNanos > WAITED_RATIO * fastest;
    boolean keptCapped = t.reportCapped;
    Verdict judged = implausible ? Verdict.DISAGREES
        : judgeKeptReport(t, nowNanos, startNanos, inFlightAtPick, waited, fastest);
    boolean slowForIdle = fastestAnyNanos > 0 && latencyNanos > SLOW_FOR_IDLE_RATIO * fastestAnyNanos;
    boolean extreme = (capped && waited) || (judged == Verdict.DISAGREES && keptCapped && !implausible);
    if (capped && slowForIdle) {
      workers = Math.min(workers, requestsInFlight); // no free worker: see the rule
    }
    if (extreme) {
      judged = Verdict.DISAGREES;
    }
    if (judged == Verdict.DISAGREES) {
      int n = t.disagreements + 1;
      if (extreme || n >= DISAGREEMENTS_TO_DISTRUST) {
        distrust(t, nowNanos);
        return implausible ? Outcome.IMPLAUSIBLE : Outcome.DISTRUSTED;
      }
      t.disagreements = n;
      if (implausible) {
        return Outcome.IMPLAUSIBLE;
      }
    } else if (judged == Verdict.AGREES) {
      t.disagreements = 0;
    }
    t.reportedUtilization = u ? utilization : Double.NaN;
    t.reportedInFlight = r ? requestsInFlight : Double.NaN;
    t.reportedWorkers = workers;
    t.reportCapped = capped;
    t.inFlightAtReport = own;
    t.reportStampNanos = nowNanos;
    t.reported = true;
    return Outcome.KEPT;
  }

  /**
   * Whether the kept report in hand (the latest before the one arriving now) agrees with the call
   * being answered, sent at {@code startNanos} and done at {@code nowNanos}; {@code waited} if it
   * took over {@value #WAITED_RATIO} x the fastest answer. A report claims a free worker when its
   * count, plus our calls sent since, is below its workers (or, without workers, it claimed nothing
   * in flight and we sent nothing since): least queueing's "cold". It disagrees if it claimed one
   *
   * <ul>
   *   <li>when the call was sent (it came before, and was fresh then), and the call waited; or
   *   <li>while the call was out and at least {@value #WAITED_RATIO} x the fastest answer before its
   *       end, so that the call was still waiting in the queue (unless its own service took that
   *       long): an honest target with a call waiting has no free worker.
   * </ul>
   *
   * A report that claimed no free worker agrees (it cannot draw calls), and so does one that
   * claimed one on a call that did not wait. Anything else is {@link Verdict#UNJUDGED}: no report,
   * a stale one, or one from the end of the call.
   */
  private static Verdict judgeKeptReport(TargetLoad t, long nowNanos, long startNanos, int inFlightAtPick, boolean waited,
      double fastest) {
    if (!t.reported) {
      return Verdict.UNJUDGED;
    }
    long stamp = t.reportStampNanos;
    double rif = t.reportedInFlight;
    double workers = t.reportedWorkers;
    boolean before = stamp - startNanos <= 0;
    if (before && startNanos - stamp >= TargetLoad.REPORT_TTL_NANOS) {
      return Verdict.UNJUDGED;
    }
    int sentSince = before ? Math.max(0, inFlightAtPick - t.inFlightAtReport) : 0;
    boolean claimedFree = workers > 0 ? rif + sentSince < workers
        : sentSince == 0 && (rif == 0 || (Double.isNaN(rif) && t.reportedUtilization == 0));
    if (!claimedFree) {
      return Verdict.AGREES;
    }
    if (!waited) {
      return Verdict.AGREES;
    }
    if (before || nowNanos - stamp >= WAITED_RATIO * fastest) {
      return Verdict.DISAGREES;
    }
    return Verdict.UNJUDGED;
  }

  /** Falls back to unreported scoring: the report in hand is dropped, and the next ones until the fallback ends. */
  private static void distrust(TargetLoad t, long nowNanos) {
    int level = t.distrustLevel;
    if (level > 0 && nowNanos - t.distrustedUntilNanos > DISTRUST_MAX_NANOS) {
      level = 0; // good for four minutes since the last fallback: start again at 30 s
    }
    long length = Math.min(DISTRUST_MAX_NANOS, DISTRUST_BASE_NANOS << Math.min(level, 3));
    t.disagreements = 0;
    t.reported = false;
    t.distrustedUntilNanos = nowNanos + length;
    t.distrustLevel = level + 1;
  }
}
