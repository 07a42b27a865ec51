package dev.fairway.lb;

/**
 * The fleet-load reader: what a strategy or the free-worker pick reads of a target's load from
 * every client, as this balancer knows it. Three reads, each from the {@link TargetLoad} record
 * alone (the report path writes it, {@link ReportJudge}; a read never changes it):
 *
 * <ul>
 *   <li>{@link #inFlight}: the calls at the target from every client, by its fresh report plus
 *       what this balancer sent since;
 *   <li>{@link #load}: the same as far as the target's reports are trusted, the rest by this
 *       balancer's own traffic on the fleet's scale (least connections' and power of two choices'
 *       count, {@link ReportJudge}'s trust model);
 *   <li>{@link #workers}: whether a worker is free ({@link WorkerState}), read by least queueing's
 *       cold test, and with {@link #workersForHedge} by the hedge's free-worker pick ({@link
 *       LoadBalancer#pickWithFreeWorker}). From this balancer's own calls, except that the hedge
 *       also believes a report of every worker busy: a report's claim of free workers is never
 *       read, since in a fleet no client sees enough of a target to check it (the lab's reports
 *       scenario).
 * </ul>
 *
 * <p>Stateless; every read is a few field reads, lock-free and allocation-free, fit for the pick
 * path.
 */
final class FleetLoad {
  private FleetLoad() {}

  /** Whether a target has a worker free, as far as this balancer can tell: {@link #workers}. */
  enum WorkerState {
    /** A worker is free. */
    FREE,
    /** Every worker is busy. */
    BUSY,
    /** Nothing this balancer knows tells. */
    UNKNOWN
  }

  /**
   * Calls in flight at {@code t} from every client, as well as this balancer knows: the fresh
   * report's count plus the change in this balancer's own calls there since (C3's concurrency
   * compensation, with the report standing in for the other clients), never below this balancer's
   * own count. The change counts down too: the call the report answered has left since, so a report
   * that counted it is read exact, and one that did not (the starter's filter) one call low until our
   * next call there, never below our own. Before, the answered call stayed in a counting report's
   * count until the next report, and least connections at 1 client kept one call too many on every
   * target that had just answered it, and its tail grew with such reports. Without
   * a fresh report ({@link TargetLoad#REPORT_TTL_NANOS}), this balancer's own count.
   */
  static double inFlight(TargetLoad t, long nowNanos) {
    int own = t.inFlight;
    if (!t.reportFresh(nowNanos, TargetLoad.REPORT_TTL_NANOS)) {
      return own;
    }
    double rif = t.reportedInFlight;
    if (!(rif >= 0)) {
      return own;
    }
    return Math.max(own, rif + own - t.inFlightAtReport);
  }

  /**
   * The calls at {@code t} from every client, for the strategies that compare counts: its trust in
   * its fresh report ({@link #inFlight}) plus the rest in what our own traffic there implies,
   * {@code scale x} our own average calls there, never below our calls now ({@link ReportJudge},
   * where the trust model and the scale are stated). Without a fresh report: the latter alone once
   * the target has been judged, else our own count (a balancer that hears no reports counts as it
   * always did).
   */
  static double load(TargetLoad t, long nowNanos, double scale) {
    int own = t.inFlight;
    double implied = scale > 1 ? own + (scale - 1) * t.ownCalls(nowNanos) : own;
    if (!t.reportFresh(nowNanos, TargetLoad.REPORT_TTL_NANOS)) {
      return t.judgedFleet > 0 ? Math.rint(implied) : own;
    }
    double trust = t.trust;
    // Whole calls: a blend of two counts a call apart must not order targets that tie on both.
    return Math.rint(trust * inFlight(t, nowNanos) + (1 - trust) * implied);
  }

  /**
   * Whether {@code t} has a worker free at {@code nowNanos}, for least queueing's cold test and the
   * hedge's free-worker pick: if this balancer is its targets' only client ({@code alone}, see
   * {@link OtherClients}) and learned the target's concurrency from its own calls ({@link
   * LearnedConcurrency#record}, fed by every strategy's successes), {@link
   * LearnedConcurrency#freeByOwnCount} free, else busy. Anything else is {@link WorkerState#UNKNOWN}:
   * in a fleet, or before the first answers, nothing this balancer sees itself tells. Load reports
   * are not read: a claim of free workers that many clients hear draws them all at once, and one
   * client's few calls there cannot check it. Failures are not read either: passive health ejects a
   * failing target, and the strategy's own choice among the targets left already weighs them.
   */
  static WorkerState workers(TargetLoad t, long nowNanos, boolean alone) {
    if (alone && t.learnedConcurrency > 0) {
      return LearnedConcurrency.freeByOwnCount(t, nowNanos) ? WorkerState.FREE : WorkerState.BUSY;
    }
    return WorkerState.UNKNOWN;
  }

  /**
   * {@link #workers} for the hedge's free-worker pick, which first believes a fresh report that says
   * every worker is busy (utilization 1 or more, ORCA's meaning): a claim against the target's own
   * interest, which at worst costs it a hedge, and which keeps extra copies out of full queues that
   * other clients filled. A report is never read as a free worker.
   */
  static WorkerState workersForHedge(TargetLoad t, long nowNanos, boolean alone) {
    if (t.reportedUtilization >= 1.0 && t.reportFresh(nowNanos, TargetLoad.REPORT_TTL_NANOS)) {
      return WorkerState.BUSY;
    }
    return workers(t, nowNanos, alone);
  }
}
