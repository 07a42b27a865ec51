package dev.fairway.lb.internal;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.LoadBalancerListener;
import dev.fairway.lb.Target;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * The call meters every HTTP client integration records for one service (lb-okhttp, lb-jdk-httpclient,
 * lb-apache-httpclient5): one registration, so the names, tags and units are the same whatever the
 * client. {@link #NOOP} (no registry) does nothing and reads no clock, so a balancer without a
 * registry pays for no metric work.
 *
 * <ul>
 *   <li>{@code fairway.requests{service,balancer,target,outcome}}: a timer per attempt, from sending
 *       it until its response body is consumed or closed, by {@link Outcome}; a call that got no
 *       target at all is timed with {@code outcome="no_target"} and {@code target=""}.
 *   <li>{@code fairway.retries{service,balancer,reason}}: attempts repeated on another target, by
 *       {@link RetryRule}'s reason.
 *   <li>{@code fairway.retry.budget.exhausted{service,balancer}}: retries not made for the budget.
 *   <li>{@code fairway.leaked.responses{service,balancer}}: response bodies garbage-collected unclosed
 *       (only integrations with a leak safety net count them).
 *   <li>A hold on the service's {@code fairway.load.reports} ({@link LoadReportMeters}), given back
 *       when the balancer closes.
 * </ul>
 *
 * <p>{@code balancer} is {@link LoadBalancer#name()}, as on the balancer's own meters. The {@code
 * target} tag is {@link LoadBalancer#targetTag}: a target beyond the balancer's {@code
 * targetMeterLimit} records into the timers tagged {@code target="other"}, which stay until the
 * balancer closes; a target with series of its own loses them when it leaves. Counters and the
 * {@code no_target} timer are registered on first use, except the budget counter (at once).
 *
 * <p>{@link #of} registers the meters as a {@link LoadBalancerListener} of their balancer, so a
 * departed target's series and, at close, every series go with it: an autoscaled service leaves no
 * time series per instance behind. Thread-safe and lock-free once a meter is registered. Not public
 * API (see the package documentation).
 */
public class CallMeters implements LoadBalancerListener {
  /** Records nothing and reads no clock. */
  public static final CallMeters NOOP = new CallMeters();
  /** What {@link #NOOP} hands out: never recorded into. */
  private static final TargetTimers NO_TIMERS = new TargetTimers("");

  /** The {@code outcome} tag of {@code fairway.requests}. */
  public enum Outcome {
    /** The target answered, with a status that is not a failure. */
    SUCCESS("success"),
    /** An I/O failure or a failure status: the target's doing. */
    FAILURE("failure"),
    /** The caller stopped waiting (cancel, interrupt), or a hedge's other copy won: not the target's doing. */
    CANCELLED("cancelled"),
    /** No target could be picked (recorded by {@link #noTarget}). */
    NO_TARGET("no_target");

    final String tag;

    Outcome(String tag) {
      this.tag = tag;
    }
  }

  private CallMeters() {}

  /**
   * The meters of the calls {@code lb} balances, in its registry, registered as its listener;
   * {@link #NOOP} when it has no registry.
   */
  public static CallMeters of(LoadBalancer lb) {
    MeterRegistry registry = lb.meterRegistry().orElse(null);
    if (registry == null) {
      return NOOP;
    }
    CallMeters meters = new Recording(registry, lb.service(), lb.name(), lb::targetTag);
    lb.addListener(meters);
    return meters;
  }

  /** The start of a timing, by the registry's clock; 0 (no clock read) when nothing is recorded. */
  public long startNanos() {
    return 0;
  }

  /** The timers of {@code target}, taken when an attempt starts; a shared empty one when nothing is recorded. */
  public TargetTimers timers(Target target) {
    return NO_TIMERS;
  }

  /** Times one attempt on the target of {@code timers}, started at {@code startNanos}, with {@code outcome}. */
  public void attempt(TargetTimers timers, Outcome outcome, long startNanos) {}

  /** Times a pick (and any backoff before it) that found no target, started at {@code startNanos}. */
  public void noTarget(long startNanos) {}

  /** Counts an attempt repeated on another target for {@code reason} ({@link RetryRule}'s). */
  public void retry(String reason) {}

  /** Counts a retry not made because the service's retry budget was spent. */
  public void budgetExhausted() {}

  /** Counts a response body garbage-collected unclosed, whose slot was freed then. */
  public void leaked() {}

  /**
   * Where this service's {@code fairway.load.reports} are counted (shared with the balancer, held
   * until it closes); {@link LoadReportMeters#NOOP} when nothing is recorded.
   */
  public LoadReportMeters loadReports() {
    return LoadReportMeters.NOOP;
  }

  /**
   * One target's {@code fairway.requests} timers, one per outcome, registered on first use. Once
   * retired (the target left, or the balancer closed) its timers are removed from the registry and
   * no new one is registered; attempts still in flight record into the removed timers, which is
   * harmless.
   */
  public static final class TargetTimers {
    final String targetId;
    final AtomicReferenceArray<Timer> byOutcome = new AtomicReferenceArray<>(Outcome.values().length);
    volatile boolean retired;

    TargetTimers(String targetId) {
      this.targetId = targetId;
    }
  }

  /** The meters of one balancer's calls in its registry. */
  private static final class Recording extends CallMeters {
    private final MeterRegistry registry;
    private final String service;
    private final String balancer;
    private final Function<Target, String> targetTag;
    /** The timers every target beyond the limit shares; retired only when the balancer closes. */
    private final TargetTimers otherTimers = new TargetTimers("other");
    private final ConcurrentMap<String, TargetTimers> timersByTarget = new ConcurrentHashMap<>();
    private final ConcurrentMap<String, Counter> retriesByReason = new ConcurrentHashMap<>();
    private volatile @Nullable Timer noTarget; // registered on first use: most services never see one
    private volatile @Nullable Counter leaked; // likewise
    private final LoadReportMeters loadReports; // held until closed()
    private final Counter budgetExhausted;
    private volatile boolean closed;

    Recording(MeterRegistry registry, String service, String balancer, Function<Target, String> targetTag) {
      this.registry = registry;
      this.service = service;
      this.balancer = balancer;
      this.targetTag = targetTag;
      this.budgetExhausted =
          Counter.builder("fairway.retry.budget.exhausted")
              .description("Retries not made because the service's retry budget was spent")
              .tag("service", service)
              .tag("balancer", balancer)
              .register(registry);
      this.loadReports = LoadReportMeters.acquire(registry, service);
    }

    private Timer timer(String target, Outcome outcome) {
      return Timer.builder("fairway.requests")
          .description("Attempts sent by a Fairway client integration, until their body was consumed or closed")
          .tag("service", service)
          .tag("balancer", balancer)
          .tag("target", target)
          .tag("outcome", outcome.tag)
          .register(registry);
    }

    @Override
    public long startNanos() {
      return registry.config().clock().monotonicTime();
    }

    @Override
    public TargetTimers timers(Target target) {
      TargetTimers timers = timersByTarget.get(target.id());
      if (timers == null) {
        String tag = targetTag.apply(target);
        timers = timersByTarget.computeIfAbsent(target.id(),
            id -> tag.equals(id) ? new TargetTimers(id) : otherTimers);
        if (closed) {
          retire(timers); // picked just before the balancer closed: record nothing new
        }
      }
      return timers;
    }

    @Override
    @SuppressWarnings("EnumOrdinal") // the ordinal indexes byOutcome, sized by Outcome.values(): lock-free, no map
    public void attempt(TargetTimers timers, Outcome outcome, long startNanos) {
      Timer timer = timers.byOutcome.get(outcome.ordinal());
      if (timer == null) {
        if (timers.retired) {
          return; // the target left: registering now would leak the meter
        }
        timer = timer(timers.targetId, outcome); // registration is idempotent, so a race is harmless
        timers.byOutcome.set(outcome.ordinal(), timer);
        if (timers.retired) {
          registry.remove(timer); // retired meanwhile; retire() may have missed this timer
        }
      }
      timer.record(registry.config().clock().monotonicTime() - startNanos, TimeUnit.NANOSECONDS);
    }

    @Override
    public void noTarget(long startNanos) {
      Timer timer = noTarget;
      if (timer == null) {
        if (closed) {
          return;
        }
        timer = unlessClosed(timer("", Outcome.NO_TARGET));
        noTarget = timer;
      }
      timer.record(registry.config().clock().monotonicTime() - startNanos, TimeUnit.NANOSECONDS);
    }

    @Override
    public void retry(String reason) {
      Counter counter = retriesByReason.get(reason);
      if (counter == null) {
        if (closed) {
          return;
        }
        counter = retriesByReason.computeIfAbsent(reason, r -> unlessClosed(
            Counter.builder("fairway.retries")
                .description("Attempts repeated on another target")
                .tag("service", service)
                .tag("balancer", balancer)
                .tag("reason", r)
                .register(registry)));
      }
      counter.increment();
    }

    @Override
    public void budgetExhausted() {
      budgetExhausted.increment();
    }

    @Override
    public void leaked() {
      Counter counter = leaked;
      if (counter == null) {
        if (closed) {
          return;
        }
        counter = unlessClosed(Counter.builder("fairway.leaked.responses")
            .description("Response bodies garbage-collected unclosed; their in-flight slots were freed then")
            .tag("service", service)
            .tag("balancer", balancer)
            .register(registry));
        leaked = counter;
      }
      counter.increment();
    }

    @Override
    public LoadReportMeters loadReports() {
      return loadReports;
    }

    @Override
    public void targetRemoved(Target target) {
      TargetTimers timers = timersByTarget.remove(target.id());
      if (timers != null && timers != otherTimers) {
        retire(timers);
      }
    }

    @Override
    public void closed() {
      boolean first = !closed; // the balancer tells its listeners once; this guards the shared hold anyway
      closed = true;
      for (TargetTimers timers : timersByTarget.values()) {
        retire(timers);
      }
      timersByTarget.clear();
      retire(otherTimers);
      retriesByReason.values().forEach(registry::remove);
      retriesByReason.clear();
      remove(noTarget);
      remove(leaked);
      if (first) {
        loadReports.release();
      }
      registry.remove(budgetExhausted);
    }

    private void retire(TargetTimers timers) {
      timers.retired = true;
      for (int i = 0; i < timers.byOutcome.length(); i++) {
        remove(timers.byOutcome.get(i));
      }
    }

    /** {@code meter}, removed from the registry again if the balancer closed while it registered. */
    private <M extends Meter> M unlessClosed(M meter) {
      if (closed) {
        registry.remove(meter);
      }
      return meter;
    }

    private void remove(@Nullable Meter meter) {
      if (meter != null) {
        registry.remove(meter);
      }
    }
  }
}
