package dev.fairway.lb;

/**
 * The learned-concurrency rule: how many calls a target serves at once without queueing, learned
 * from this balancer's own calls, the way TCP Vegas reads a queue from round-trip times. {@link
 * Completions#success} runs it for every success, whatever the strategy; least queueing reads it
 * (its cold test when this balancer is its targets' only client) and so does the hedge's free-worker
 * pick ({@link FleetLoad#workers}). The fields it writes live in {@link TargetLoad}, on the
 * cache lines a pick already reads; the rule is here. Stateless; racy like the EWMA (a lost update,
 * never a corrupt value).
 */
final class LearnedConcurrency {
  private LearnedConcurrency() {}

  /** A call at most this many times the service time did not queue. */
  static final double NO_QUEUE_RATIO = 1.1;
  /** A call more than this many times the service time queued. */
  static final double QUEUED_RATIO = 1.5;

  /**
   * Learns from a successful call how many calls the target serves at once, the way TCP Vegas reads
   * a queue from round-trip times, with this balancer's own count standing in for the target's:
   * {@code inFlightAtPick} is how many of this balancer's calls were on the target when this one was
   * sent (itself included). A call no slower than {@value #NO_QUEUE_RATIO} x the service time did
   * not wait, so the target served that many at once: the estimate rises to it. A call slower than
   * {@value #QUEUED_RATIO} x waited: sent above the estimate, it was a probe that found the limit
   * (probing pauses for a window of the minimum, see {@link TargetLoad#recordSuccessLatency}); sent at or
   * below, the estimate was too high and drops by one. Two calls in a row that were this
   * balancer's only one on the target and still waited, the second within {@link
   * OtherClients#holdNanos} of the first, prove that other clients load it: the method returns true,
   * and the balancer stops trusting its own counts (see {@link OtherClients}). One such call
   * alone proves nothing: a garbage-collection pause or a cold cache makes one call in a hundred
   * slow on a target nobody else calls (the lab's {@code jitter}: 1% of calls 20x slower kept one
   * client's balancer in least-response-time mode for about half its picks). Racy like the EWMA.
   *
   * @return true if the call shows load from other clients
   */
  static boolean record(TargetLoad t, int inFlightAtPick, long latencyNanos, long nowNanos) {
    double min = t.minLatencyNanos;
    if (min <= 0 || inFlightAtPick <= 0) {
      return false;
    }
    int learned = t.learnedConcurrency;
    if (latencyNanos <= min * NO_QUEUE_RATIO) {
      if (inFlightAtPick == 1) {
        t.aloneWaitedAtNanos = TargetLoad.NO_ALONE_WAIT;
      }
      if (inFlightAtPick > learned) {
        t.learnedConcurrency = inFlightAtPick;
      }
      return false;
    }
    if (latencyNanos <= min * QUEUED_RATIO) {
      return false; // too close to tell
    }
    if (inFlightAtPick == 1) {
      long previous = t.aloneWaitedAtNanos;
      t.aloneWaitedAtNanos = nowNanos;
      return previous != TargetLoad.NO_ALONE_WAIT && nowNanos - previous <= OtherClients.holdNanos(min);
    }
    if (inFlightAtPick > learned) {
      t.probeBlockedUntilNanos = nowNanos
          + Math.max(TargetLoad.MIN_WINDOW_NANOS, (long) (TargetLoad.MIN_WINDOW_FACTOR * min));
    } else if (learned > 1) {
      t.learnedConcurrency = learned - 1;
    }
    return false;
  }

  /**
   * True if this balancer may send one more call without it waiting, as far as its own calls tell:
   * fewer of them are in flight than it learned the target serves at once, or exactly as many and no
   * probe above that queued lately. (Not the latency average: one queued probe lifts a peak EWMA for
   * seconds. A target that became slower is caught by {@link #record} instead: each slow
   * call at or below the estimate lowers it by one.)
   */
  static boolean freeByOwnCount(TargetLoad t, long nowNanos) {
    int learned = t.learnedConcurrency;
    if (learned == 0) {
      return false;
    }
    int k = t.inFlight;
    return k < learned || (k == learned && nowNanos - t.probeBlockedUntilNanos >= 0);
  }
}
