package dev.fairway.lb;

import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

/** Padding so that the load fields below do not share a cache line with other objects' fields. */
abstract class TargetLoadPadBefore {
  long p01, p02, p03, p04, p05, p06, p07, p08;
}

/**
 * The per-target load record: everything this balancer measures and hears about one target's load,
 * in one place. Five things: the calls in flight; the peak-EWMA latency average (as Finagle's
 * {@code PeakEwma}); the windowed minimum latency (the service time); the target's latest load
 * report ({@link Pick#reportLoad}, fresh for {@link #REPORT_TTL_NANOS}); and the concurrency learned
 * from this balancer's own calls (written by its rule, {@link LearnedConcurrency}). It measures; it
 * does not choose: strategies read it to score targets. It is a superclass of {@link TrackedTarget}
 * rather than a field so that a selection reads it without another pointer hop.
 *
 * <p>Every pick and completion touches these fields, so they sit together on their own cache
 * line(s). Lock-free; the EWMA is a racy read-modify-write by design (a lost sample, never a
 * corrupt one).
 */
abstract class TargetLoad extends TargetLoadPadBefore {
  private static final AtomicIntegerFieldUpdater<TargetLoad> IN_FLIGHT =
      AtomicIntegerFieldUpdater.newUpdater(TargetLoad.class, "inFlight");

  volatile int inFlight;
  /** Latency average in nanoseconds; 0 until the first sample. */
  volatile double ewmaNanos;
  /** Ticker value of the last EWMA update. */
  volatile long ewmaStampNanos;

  /**
   * The target's service time as this balancer sees it: the lowest successful latency of the
   * previous and the current window (see {@link #recordSuccessLatency}), in nanoseconds; 0 until the
   * first success. TCP Vegas' base RTT: latency above it is queueing.
   */
  volatile double minLatencyNanos;
  /** The lowest successful latency of the current window alone. */
  volatile double windowMinNanos;
  /** Ticker value at which the current window began. */
  volatile long windowStartNanos;

  // The latest load report from the target itself (see Pick#reportLoad). Three racy fields: a reader
  // may see two reports' halves, both recent; never a value the target did not send.
  /** Reported utilization (1.0 = every worker busy); NaN when the report had none. */
  volatile double reportedUtilization = Double.NaN;
  /** Reported requests in flight at the target, from every client; NaN when the report had none. */
  volatile double reportedInFlight = Double.NaN;
  /** This balancer's own in-flight count on the target when the report arrived. */
  volatile int inFlightAtReport;
  /** Ticker value of the report; meaningful only while {@link #reported} is true. */
  volatile long reportStampNanos;
  /** True once any report arrived. */
  volatile boolean reported;

  /**
   * How long a target's load report ({@link Pick#reportLoad}) is used after it arrived.
   * A report is a per-request snapshot of a queue that changes in milliseconds, so it is worth
   * little after a few seconds; gRPC's weighted round robin expires its weights after 3 minutes
   * (weight_expiration_period) because they are averages reported out of band, not snapshots. A
   * target busy enough to matter answers many calls per report lifetime, so it keeps a fresh one;
   * one that stops reporting is judged again by what this balancer measures itself.
   */
  static final long REPORT_TTL_NANOS = java.time.Duration.ofSeconds(5).toNanos();

  int inFlight() {
    return inFlight;
  }

  // What this balancer learned of the target's concurrency from its own calls: least queueing's
  // rule (LearnedConcurrency) writes and reads these; nothing else does.
  /** The most calls of this balancer the target served at once without queueing; 0 until known. */
  volatile int learnedConcurrency;
  /** Ticker value until which probing one call above {@link #learnedConcurrency} waits. */
  volatile long probeBlockedUntilNanos;
  /**
   * When this balancer's last call that was alone on the target waited, or {@link #NO_ALONE_WAIT}
   * if that call did not wait (or none has yet).
   */
  volatile long aloneWaitedAtNanos = NO_ALONE_WAIT;
  static final long NO_ALONE_WAIT = Long.MIN_VALUE;

  // What the report judge (ReportJudge) keeps: written on the report path only, read by FleetLoad.load.
  /** This balancer's answers with a report from the target, decayed over {@link ReportJudge#WINDOW_NANOS}. */
  volatile double answerCount;
  /** Ticker value of the last answer counted in {@link #answerCount}. */
  volatile long answerStampNanos;
  /** Ticker value of the first answer counted; meaningful once {@link #answerCount} > 0. */
  volatile long firstAnswerNanos;
  /** Average latency of those answers, in nanoseconds; 0 until the first. */
  volatile double answerLatencyNanos;
  /** Average of the fleet's calls at the target as its reports said (never below ours); 0 until the first. */
  volatile double judgedFleet;
  /** How far the target's reports are believed, 0..1 ({@link ReportJudge}); 0 until they agree. */
  volatile double trust;

  /** Counts an answer with a report at {@code nowNanos} that took {@code latencyNanos}, for {@link #ownCalls}. */
  final void recordAnswer(long nowNanos, long latencyNanos) {
    double count = decayedAnswers(nowNanos);
    if (count == 0) {
      firstAnswerNanos = nowNanos;
    }
    answerCount = count + 1;
    answerStampNanos = nowNanos;
    double sample = Math.max(1.0, (double) latencyNanos);
    double average = answerLatencyNanos;
    answerLatencyNanos = average == 0 ? sample : average + ReportJudge.AVERAGE_STEP * (sample - average);
  }

  private double decayedAnswers(long nowNanos) {
    double count = answerCount;
    return count == 0 ? 0 : count * decay(nowNanos - answerStampNanos, ReportJudge.WINDOW_STEPS_PER_NANO);
  }

  /**
   * This balancer's own calls at the target on average, by Little's law on its own traffic: its
   * answers per nanosecond over the last window times their latency. Decays to 0 when answers stop.
   */
  final double ownCalls(long nowNanos) {
    double count = decayedAnswers(nowNanos);
    if (count == 0) {
      return 0;
    }
    // A decayed count reaches rate x window only a window after the first answer: until then it is
    // divided by the share it has reached (as Adam corrects its averages' start), at most 16-fold.
    double reached = 1 - decay(nowNanos - firstAnswerNanos, ReportJudge.WINDOW_STEPS_PER_NANO);
    return count * answerLatencyNanos / (ReportJudge.WINDOW_NANOS * Math.max(1.0 / 16, reached));
  }

  /** exp(-age / tau) from the table, with {@code stepsPerNano} = {@link #DECAY_STEPS_PER_TAU} / tau. */
  static double decay(long ageNanos, double stepsPerNano) {
    long step = (long) (ageNanos * stepsPerNano);
    if (step <= 0) {
      return 1.0;
    }
    return DECAY[(int) Math.min(step, DECAY.length - 1)];
  }

  /**
   * Keeps a report from the target, arriving at {@code nowNanos} while this balancer has {@code own}
   * calls there: its utilization and its count, each only if it is a number from 0 up (else NaN),
   * and nothing at all if neither is. How far a kept count is believed is {@link ReportJudge}'s
   * business, not this record's.
   *
   * @return false if the report had neither value (nothing changed)
   */
  final boolean recordReport(double utilization, double requestsInFlight, int own, long nowNanos) {
    boolean u = utilization >= 0 && utilization < Double.POSITIVE_INFINITY;
    boolean r = requestsInFlight >= 0 && requestsInFlight < Double.POSITIVE_INFINITY;
    if (!u && !r) {
      return false;
    }
    reportedUtilization = u ? utilization : Double.NaN;
    reportedInFlight = r ? requestsInFlight : Double.NaN;
    inFlightAtReport = own;
    reportStampNanos = nowNanos;
    reported = true;
    return true;
  }

  /** True if a report arrived within {@code ttlNanos} before {@code nowNanos}. */
  final boolean reportFresh(long nowNanos, long ttlNanos) {
    return reported && nowNanos - reportStampNanos < ttlNanos;
  }

  /** A window of the minimum is this many times the minimum itself (at least {@link #MIN_WINDOW_NANOS}). */
  static final int MIN_WINDOW_FACTOR = 16;
  static final long MIN_WINDOW_NANOS = 50_000_000L;

  /**
   * Feeds the windowed minimum with a successful call's latency. The minimum is the lowest sample of
   * the previous window and the current one (two buckets, as Linux's windowed min filter for BBR
   * keeps); a window lasts {@value #MIN_WINDOW_FACTOR} x the minimum (at least 50 ms), so it is
   * measured in the target's own service times at any time scale. A lower sample lowers it at once;
   * when a window ends, the minimum becomes that window's own, so a target that became ten times
   * slower for good has its new minimum within two windows, while one queued sample never becomes
   * it. Failures never come here: a fast error says nothing about the service time. Racy like the
   * EWMA: a lost sample, never a corrupt one.
   */
  void recordSuccessLatency(long sampleNanos, long nowNanos) {
    double sample = Math.max(1.0, (double) sampleNanos);
    double min = minLatencyNanos;
    if (min == 0.0) {
      minLatencyNanos = sample;
      windowMinNanos = sample;
      windowStartNanos = nowNanos;
      return;
    }
    if (nowNanos - windowStartNanos >= Math.max(MIN_WINDOW_NANOS, MIN_WINDOW_FACTOR * min)) {
      minLatencyNanos = Math.min(windowMinNanos, sample);
      windowMinNanos = sample;
      windowStartNanos = nowNanos;
      return;
    }
    if (sample < windowMinNanos) {
      windowMinNanos = sample;
    }
    if (sample < min) {
      minLatencyNanos = sample;
    }
  }

  void acquire() {
    IN_FLIGHT.incrementAndGet(this);
  }

  /** Increments in-flight only if it is below {@code limit}; false if it was at or above. */
  boolean tryAcquire(int limit) {
    return incrementBelow(IN_FLIGHT, this, limit);
  }

  /**
   * Increments {@code field} of {@code owner} only if it is below {@code limit}, by compare-and-set,
   * so concurrent callers never take it past the limit; false if it was at or above.
   */
  static <T> boolean incrementBelow(AtomicIntegerFieldUpdater<T> field, T owner, int limit) {
    for (;;) {
      int current = field.get(owner);
      if (current >= limit) {
        return false;
      }
      if (field.compareAndSet(owner, current, current + 1)) {
        return true;
      }
    }
  }

  void releaseSlot() {
    IN_FLIGHT.decrementAndGet(this);
  }

  /** Forgets the latency average: a target back in service is measured afresh. */
  void resetLatency() {
    ewmaNanos = 0;
    minLatencyNanos = 0;
    learnedConcurrency = 0;
  }

  /**
   * Peak-EWMA update: a sample above the average replaces it at once (so a slowdown is seen on the
   * next pick); one below pulls it down with weight {@code 1 - exp(-dt/tau)}, so the average forgets
   * at a rate set by time, not by call rate. Concurrent updates may lose one sample; never corrupt.
   */
  void recordLatency(long sampleNanos, long nowNanos, double tauNanos) {
    double sample = Math.max(1.0, (double) sampleNanos);
    double current = ewmaNanos;
    if (current == 0.0 || sample >= current) {
      ewmaNanos = sample;
    } else {
      double x = Math.max(0L, nowNanos - ewmaStampNanos) / tauNanos;
      // exp(-x) by its Taylor series while x is small (error below 2e-4 for x < 0.1): samples arrive
      // far more often than tau, and Math.exp would cost more than the rest of the completion.
      double w = x < 0.1 ? 1.0 - x + x * x * 0.5 - x * x * x / 6.0 : Math.exp(-x);
      ewmaNanos = current * w + sample * (1.0 - w);
    }
    ewmaStampNanos = nowNanos;
  }

  /**
   * A latency known only to be at least {@code sampleNanos}: a call cancelled after that long
   * because a hedge answered first. If the average as seen now ({@link #decayedEwma}) is below it,
   * the average becomes it (as a peak sample would); otherwise nothing changes, since a lower bound
   * below the average says nothing about it. Racy like {@link #recordLatency}.
   */
  void recordLowerBound(long sampleNanos, long nowNanos, double stepsPerNano) {
    double sample = Math.max(1.0, (double) sampleNanos);
    if (sample > decayedEwma(nowNanos, stepsPerNano)) {
      ewmaNanos = sample;
      ewmaStampNanos = nowNanos;
    }
  }

  /** Steps of the decay table per time constant: the decay is read to within 0.4%. */
  static final int DECAY_STEPS_PER_TAU = 256;
  /** exp(-i / 256) for ages up to 16 time constants (beyond, a factor of 1e-7: as good as gone). */
  private static final double[] DECAY = new double[16 * DECAY_STEPS_PER_TAU];

  static {
    for (int i = 0; i < DECAY.length; i++) {
      DECAY[i] = Math.exp(-(double) i / DECAY_STEPS_PER_TAU);
    }
  }

  /**
   * The average as seen at {@code nowNanos}: it decays towards zero while no sample arrives, so a
   * target that was slow and then left alone is tried again. The factor {@code exp(-age/tau)} comes
   * from a table ({@code stepsPerNano} is {@link #DECAY_STEPS_PER_TAU} / tau, computed once per
   * balancer), which keeps {@code Math.exp} off the pick path: a pick scores every target, and an
   * idle balancer's averages are all old.
   */
  final double decayedEwma(long nowNanos, double stepsPerNano) {
    double current = ewmaNanos;
    if (current == 0.0) {
      return 0.0; // not measured yet: nothing to decay
    }
    long step = (long) ((nowNanos - ewmaStampNanos) * stepsPerNano);
    if (step <= 0) {
      return current;
    }
    return current * DECAY[(int) Math.min(step, DECAY.length - 1)];
  }
}

abstract class TargetLoadPadAfter extends TargetLoad {
  long q01, q02, q03, q04, q05, q06, q07, q08;
}
