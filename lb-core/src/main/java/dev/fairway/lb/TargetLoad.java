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
  /**
   * The lowest successful latency since the target was (re)admitted, in nanoseconds; 0 until the
   * first success. Unlike {@link #minLatencyNanos} it never rises, so a target whose every call
   * queues cannot raise it to the queued latency: the plausibility rules compare against it.
   */
  volatile double fastestNanos;
  /** The lowest successful latency of the current window alone. */
  volatile double windowMinNanos;
  /** Ticker value at which the current window began. */
  volatile long windowStartNanos;
  /**
   * False while every success of the current window came from a target whose fresh report said
   * every worker was busy ({@link #recordSuccessLatency}: such a window measured a queue).
   */
  volatile boolean notBusyInWindow;

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

  // What the plausibility rules (recordReport) keep: written on the report path only.
  /** Workers the latest kept report implies (in flight / utilization), capped; 0 when it cannot tell. */
  volatile double reportedWorkers;
  /** The most calls of this balancer that were on the target when one of its reports arrived. */
  volatile int peakOwnAtReport;
  /** True if the latest kept report claimed a free worker only thanks to implying more workers than the cap. */
  volatile boolean reportCapped;
  /** Reports in a row that disagreed with what this balancer saw. */
  volatile int disagreements;
  /** Ticker value until which the target's reports are not used; meaningful while {@link #distrustLevel} > 0. */
  volatile long distrustedUntilNanos;
  /** 0 until the first fallback; then how many fallbacks in a row (each one lasts twice the one before). */
  volatile int distrustLevel;

  // What the report judge (ReportJudge) keeps: written on the report path only, read by fleetLoad.
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

  /** What became of a report: {@link #recordReport}'s results. */
  static final int REPORT_KEPT = 0;
  static final int REPORT_EMPTY = 1;
  static final int REPORT_IMPLAUSIBLE = 2;
  static final int REPORT_DISTRUSTED = 3;

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
   *       still on the wire. It is discarded ({@link #REPORT_IMPLAUSIBLE}).
   *   <li><b>Workers capped.</b> The implied workers (rif / utilization) are at most {@value
   *       #WORKER_MARGIN} x the most of our calls it ever held at a report or the concurrency we
   *       learned, at least {@value #WORKER_MARGIN}: a report of 1e6 or Infinity workers
   *       counts as a few, so once our calls exceed them the target is hot again. Our own counts
   *       only, since a liar's own counts would raise its cap. The margin is wide because in a
   *       fleet each client holds a few of a target's calls (8 workers seen as 1 or 2 of ours).
   *   <li><b>Unverified free workers are ours only.</b> A report that implies more workers than the
   *       cap while claiming fewer calls than the cap ({@link #reportCapped}: its free workers exist
   *       only by the claim) counts as many workers as we ourselves had calls there at a report or
   *       learned, at least 1, for least queueing's free-worker test ({@link #reportedWorkers}); the
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
   *       x the fastest answer the target ever gave us ({@link #fastestNanos}) disagrees: it waited
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
   *       Its reports meanwhile are discarded unread ({@link #REPORT_DISTRUSTED}); for the
   *       strategies that count calls see {@link ReportJudge}. An agreeing report ends the streak.
   * </ul>
   *
   * <p>NaN or negative values are not kept (the field keeps NaN); a report with neither value
   * changes nothing ({@link #REPORT_EMPTY}).
   *
   * {@code fastestAnyNanos} is the fastest answer any target gave this balancer (0 until one did).
   *
   * @return one of {@link #REPORT_KEPT}, {@link #REPORT_EMPTY}, {@link #REPORT_IMPLAUSIBLE}, {@link #REPORT_DISTRUSTED}
   */
  int recordReport(double utilization, double requestsInFlight, long nowNanos, long latencyNanos, long startNanos,
      int inFlightAtPick, double fastestAnyNanos) {
    boolean u = utilization >= 0 && utilization < Double.POSITIVE_INFINITY;
    boolean r = requestsInFlight >= 0 && requestsInFlight < Double.POSITIVE_INFINITY;
    if (!u && !r) {
      return REPORT_EMPTY;
    }
    if (distrustLevel > 0 && nowNanos - distrustedUntilNanos < 0) {
      return REPORT_DISTRUSTED;
    }
    int own = inFlight;
    double claimed = r ? requestsInFlight : utilization == 0 ? 0 : Double.NaN;
    boolean implausible = claimed < own - 1 - own / IN_TRANSIT_SHARE;
    int peak = peakOwnAtReport;
    if (!implausible && own > peak) {
      peakOwnAtReport = peak = own;
    }
    double workers = 0;
    double cappedWorkers = 0;
    boolean capped = false;
    if (u && r && utilization > 0 && requestsInFlight > 0) {
      double cap = (double) WORKER_MARGIN * Math.max(1, Math.max(peak, learnedConcurrency));
      double implied = requestsInFlight / utilization;
      capped = implied > cap && requestsInFlight < cap;
      cappedWorkers = Math.min(cap, implied);
      workers = capped ? Math.max(1, Math.max(peak, learnedConcurrency)) : cappedWorkers;
    }
    double fastest = fastestNanos;
    boolean waited = fastest > 0 && latencyNanos > WAITED_RATIO * fastest;
    boolean keptCapped = reportCapped;
    int judged = implausible ? DISAGREES : judgeKeptReport(nowNanos, startNanos, inFlightAtPick, waited, fastest);
    boolean slowForIdle = fastestAnyNanos > 0 && latencyNanos > SLOW_FOR_IDLE_RATIO * fastestAnyNanos;
    boolean extreme = (capped && waited) || (judged == DISAGREES && keptCapped && !implausible);
    if (capped && slowForIdle) {
      workers = Math.min(workers, requestsInFlight); // no free worker: see the rule
    }
    if (extreme) {
      judged = DISAGREES;
    }
    if (judged == DISAGREES) {
      int n = disagreements + 1;
      if (extreme || n >= DISAGREEMENTS_TO_DISTRUST) {
        distrust(nowNanos);
        return implausible ? REPORT_IMPLAUSIBLE : REPORT_DISTRUSTED;
      }
      disagreements = n;
      if (implausible) {
        return REPORT_IMPLAUSIBLE;
      }
    } else if (judged == AGREES) {
      disagreements = 0;
    }
    reportedUtilization = u ? utilization : Double.NaN;
    reportedInFlight = r ? requestsInFlight : Double.NaN;
    reportedWorkers = workers;
    reportCapped = capped;
    inFlightAtReport = own;
    reportStampNanos = nowNanos;
    reported = true;
    return REPORT_KEPT;
  }

  static final int AGREES = 0;
  static final int DISAGREES = 1;
  static final int UNKNOWN = 2;

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
   * claimed one on a call that did not wait. Anything else is {@link #UNKNOWN}: no report, a stale
   * one, or one from the end of the call.
   */
  private int judgeKeptReport(long nowNanos, long startNanos, int inFlightAtPick, boolean waited, double fastest) {
    if (!reported) {
      return UNKNOWN;
    }
    long stamp = reportStampNanos;
    double rif = reportedInFlight;
    double workers = reportedWorkers;
    boolean before = stamp - startNanos <= 0;
    if (before && startNanos - stamp >= REPORT_TTL_NANOS) {
      return UNKNOWN;
    }
    int sentSince = before ? Math.max(0, inFlightAtPick - inFlightAtReport) : 0;
    boolean claimedFree = workers > 0 ? rif + sentSince < workers
        : sentSince == 0 && (rif == 0 || (Double.isNaN(rif) && reportedUtilization == 0));
    if (!claimedFree) {
      return AGREES;
    }
    if (!waited) {
      return AGREES;
    }
    if (before || nowNanos - stamp >= WAITED_RATIO * fastest) {
      return DISAGREES;
    }
    return UNKNOWN;
  }

  /** Falls back to unreported scoring: the report in hand is dropped, and the next ones until the fallback ends. */
  private void distrust(long nowNanos) {
    int level = distrustLevel;
    if (level > 0 && nowNanos - distrustedUntilNanos > DISTRUST_MAX_NANOS) {
      level = 0; // good for four minutes since the last fallback: start again at 30 s
    }
    long length = Math.min(DISTRUST_MAX_NANOS, DISTRUST_BASE_NANOS << Math.min(level, 3));
    disagreements = 0;
    reported = false;
    distrustedUntilNanos = nowNanos + length;
    distrustLevel = level + 1;
  }

  /** True while the target's reports are not used ({@link #recordReport}'s fallback). */
  final boolean distrusted(long nowNanos) {
    return distrustLevel > 0 && nowNanos - distrustedUntilNanos < 0;
  }

  /** True if a report arrived within {@code ttlNanos} before {@code nowNanos}. */
  final boolean reportFresh(long nowNanos, long ttlNanos) {
    return reported && nowNanos - reportStampNanos < ttlNanos;
  }

  /**
   * Calls in flight at the target from every client, as well as this balancer knows: the fresh
   * report's count plus the calls this balancer sent since (C3's concurrency compensation, with the
   * report standing in for the other clients), never below this balancer's own count. Without a
   * fresh report, this balancer's own count.
   */
  final double fleetInFlight(long nowNanos, long ttlNanos) {
    int own = inFlight;
    if (!reportFresh(nowNanos, ttlNanos)) {
      return own;
    }
    double rif = reportedInFlight;
    if (!(rif >= 0)) {
      return own;
    }
    return Math.max(own, rif + Math.max(0, own - inFlightAtReport));
  }

  /**
   * Calls in flight at the target from every client, for strategies that compare counts: the
   * fresh report as far as the target is trusted, the rest by this balancer's own traffic there on
   * the fleet's scale ({@link ReportJudge#load}, where the trust model is stated).
   */
  final double fleetLoad(long nowNanos, double scale) {
    return ReportJudge.load(this, nowNanos, scale);
  }

  /** {@link #freeWorker}: a worker is free. */
  static final int WORKER_FREE = 0;
  /** {@link #freeWorker}: every worker is busy, or the target is failing. */
  static final int WORKERS_BUSY = 1;
  /** {@link #freeWorker}: nothing this balancer knows tells. */
  static final int WORKERS_UNKNOWN = 2;

  /**
   * Whether the target has a worker free at {@code nowNanos}, from the two signals least queueing's
   * cold test reads, for any strategy:
   *
   * <ul>
   *   <li>a fresh, trusted load report with workers: free while the calls in flight from every
   *       client ({@link #fleetInFlight}) are fewer than its workers, else busy; or one of
   *       utilization 0 with none of our calls sent since: free;
   *   <li>without one, if this balancer is its targets' only client ({@code alone}, see {@link
   *       OtherClients}) and learned the target's concurrency from its own calls
   *       ({@link LearnedConcurrency#record}, fed by every strategy's successes):
   *       {@link LearnedConcurrency#freeByOwnCount} free, else busy.
   * </ul>
   *
   * Anything else is {@link #WORKERS_UNKNOWN}: in a fleet without load reports, or before the
   * first answers, no count tells. Failures are not read here: passive health ejects a failing
   * target, and the strategy's own choice among the targets left already weighs them.
   */
  final int freeWorker(long nowNanos, boolean alone) {
    if (reportFresh(nowNanos, REPORT_TTL_NANOS)) {
      double workers = reportedWorkers;
      if (workers > 0) {
        return fleetInFlight(nowNanos, REPORT_TTL_NANOS) < workers ? WORKER_FREE : WORKERS_BUSY;
      }
      if (reportedUtilization == 0.0 && inFlight <= inFlightAtReport) {
        return WORKER_FREE;
      }
    }
    if (alone && learnedConcurrency > 0) {
      return LearnedConcurrency.freeByOwnCount(this, nowNanos) ? WORKER_FREE : WORKERS_BUSY;
    }
    return WORKERS_UNKNOWN;
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
   *
   * <p>Except that a window may raise the minimum only if at least one of its successes found the
   * target not known to be busy ({@link #freeWorker} not {@link #WORKERS_BUSY}: no fresh report
   * of every worker busy): a window whose every call was answered from a full target measured its
   * queue, not its service. Without the exception a target kept saturated (least queueing fills the
   * fastest targets' queues when every target is busy) had its queued latency taken for its service
   * time within two windows, and least queueing's hot cost, service time x (calls + 1) / workers,
   * counted the queue twice and sent calls to the slower targets' queues. A target that became
   * slower for good still shows its new minimum: each time its report shows a worker free, the window
   * may rise. Without reports nothing is known busy, so the rule is as stated above.
   */
  void recordSuccessLatency(long sampleNanos, long nowNanos) {
    double sample = Math.max(1.0, (double) sampleNanos);
    double fastest = fastestNanos;
    if (fastest == 0.0 || sample < fastest) {
      fastestNanos = sample;
    }
    double min = minLatencyNanos;
    if (min == 0.0) {
      minLatencyNanos = sample;
      windowMinNanos = sample;
      windowStartNanos = nowNanos;
      return;
    }
    if (nowNanos - windowStartNanos >= Math.max(MIN_WINDOW_NANOS, MIN_WINDOW_FACTOR * min)) {
      double next = Math.min(windowMinNanos, sample);
      if (next < min || notBusyInWindow || freeWorker(nowNanos, false) != WORKERS_BUSY) {
        minLatencyNanos = next;
      }
      windowMinNanos = sample;
      windowStartNanos = nowNanos;
      notBusyInWindow = false;
      return;
    }
    if (!notBusyInWindow && freeWorker(nowNanos, false) != WORKERS_BUSY) {
      notBusyInWindow = true;
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
    fastestNanos = 0;
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
