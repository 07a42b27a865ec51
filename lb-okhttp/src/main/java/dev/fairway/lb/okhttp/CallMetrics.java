package dev.fairway.lb.okhttp;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.LoadBalancerListener;
import dev.fairway.lb.Target;
import dev.fairway.lb.internal.LoadReportMeters;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
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
 * The interceptor's meters for one service. {@link #NOOP} (no registry) does nothing and reads no
 * clock, so a balancer without a registry pays for no metric work.
 *
 * <p>As a {@link LoadBalancerListener} of its balancer, it removes a target's meters when the target
 * leaves and every meter when the balancer closes, so an autoscaled service does not leave a time
 * series per instance behind.
 */
class CallMetrics implements LoadBalancerListener {
  static final CallMetrics NOOP = new CallMetrics();
  /** What {@link #NOOP} hands out: never recorded into. */
  static final TargetTimers NO_TIMERS = new TargetTimers("");

  /** Outcome tag values of {@code fairway.requests}. */
  enum Outcome {
    SUCCESS("success"),
    FAILURE("failure"),
    CANCELLED("cancelled"),
    NO_TARGET("no_target");

    final String tag;

    Outcome(String tag) {
      this.tag = tag;
    }
  }

  /** Result tags of {@code fairway.hedges}. */
  static final String HEDGE_SENT = "sent";
  static final String HEDGE_WON = "won";
  static final String HEDGE_BUDGET_EXHAUSTED = "budget_exhausted";
  /** No hedge: no target but the first copy's had a free worker ({@link ServiceHedging#chooseHedge}). */
  static final String HEDGE_NO_CAPACITY = "no_capacity";

  long startNanos() {
    return 0;
  }

  /** The timers of {@code target}, taken when an attempt starts; {@link #NO_TIMERS} when nothing is recorded. */
  TargetTimers timers(Target target) {
    return NO_TIMERS;
  }

  void attempt(TargetTimers timers, Outcome outcome, long startNanos) {}

  void noTarget(long startNanos) {}

  void retry(String reason) {}

  void budgetExhausted() {}

  void leaked() {}

  /** {@code result}: {@link #HEDGE_SENT}, {@link #HEDGE_WON}, {@link #HEDGE_BUDGET_EXHAUSTED} or {@link #HEDGE_NO_CAPACITY}. */
  void hedge(String result) {}

  /** The interceptor hedges calls of this service: registers the extra-load gauge. */
  void hedging(ServiceHedging hedging) {}

  /**
   * Where this service's {@code fairway.load.reports} are counted (lb-core's {@link LoadReportMeters},
   * shared with the balancer); {@link LoadReportMeters#NOOP} when nothing is recorded.
   */
  LoadReportMeters loadReports() {
    return LoadReportMeters.NOOP;
  }

  /** Meters for the calls {@code lb} balances, in {@code registry} (the balancer's own). */
  static CallMetrics micrometer(MeterRegistry registry, LoadBalancer lb) {
    return new MicrometerCallMetrics(registry, lb.service(), lb.name(), lb::targetTag);
  }

  /**
   * One target's {@code fairway.requests} timers, one per outcome, registered on first use. Once
   * retired (the target left, or the balancer closed) its timers are removed from the registry and
   * no new one is registered; attempts still in flight record into the removed timers, which is
   * harmless.
   */
  static final class TargetTimers {
    final String targetId;
    final AtomicReferenceArray<Timer> byOutcome = new AtomicReferenceArray<>(Outcome.values().length);
    volatile boolean retired;

    TargetTimers(String targetId) {
      this.targetId = targetId;
    }
  }

  /**
   * {@code fairway.requests{service,balancer,target,outcome}} (one timing per attempt, from sending it
   * until its response body is consumed or closed), {@code fairway.retries{service,balancer,reason}},
   * {@code fairway.retry.budget.exhausted{service,balancer}}, {@code
   * fairway.leaked.responses{service,balancer}}, a hold on the service's {@code fairway.load.reports}
   * ({@link LoadReportMeters}: parsed and malformed reports are counted there by {@link
   * dev.fairway.lb.internal.OutcomeRule}), and when hedging: {@code fairway.hedges{service,balancer,result}}
   * (result {@code sent}, {@code won}, {@code budget_exhausted} or {@code no_capacity}, each registered
   * on first use) and the gauge {@code fairway.hedges.extra.load{service,balancer}}.
   *
   * <p>{@code balancer} is {@link LoadBalancer#name()}, as on the balancer's own meters. The {@code
   * target} tag is {@link LoadBalancer#targetTag}: a target beyond the balancer's
   * {@code targetMeterLimit} records into the timers tagged {@code target="other"}, which stay until
   * the balancer closes; a target with series of its own loses them when it leaves.
   */
  static final class MicrometerCallMetrics extends CallMetrics {
    private final MeterRegistry registry;
    private final String service;
    private final String balancer;
    private final Function<Target, String> targetTag;
    /** The timers every target beyond the limit shares; retired only when the balancer closes. */
    private final TargetTimers otherTimers;
    private final ConcurrentMap<String, TargetTimers> timersByTarget = new ConcurrentHashMap<>();
    private final ConcurrentMap<String, Counter> retriesByReason = new ConcurrentHashMap<>();
    private final ConcurrentMap<String, Counter> hedgesByResult = new ConcurrentHashMap<>();
    private volatile @Nullable Gauge extraLoad;
    private volatile @Nullable Timer noTarget; // registered on first use: most services never see one
    private volatile @Nullable Counter leaked; // likewise
    private final LoadReportMeters loadReports; // held until closed()
    private final Counter budgetExhausted;
    private volatile boolean closed;

    MicrometerCallMetrics(MeterRegistry registry, String service, String balancer, Function<Target, String> targetTag) {
      this.registry = registry;
      this.service = service;
      this.balancer = balancer;
      this.targetTag = targetTag;
      this.otherTimers = new TargetTimers("other");
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
          .description("Attempts sent through the balancing interceptor, until their body was consumed or closed")
          .tag("service", service)
          .tag("balancer", balancer)
          .tag("target", target)
          .tag("outcome", outcome.tag)
          .register(registry);
    }

    @Override
    long startNanos() {
      return registry.config().clock().monotonicTime();
    }

    @Override
    TargetTimers timers(Target target) {
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
    void attempt(TargetTimers timers, Outcome outcome, long startNanos) {
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
    void noTarget(long startNanos) {
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
    void retry(String reason) {
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
    void hedge(String result) {
      Counter counter = hedgesByResult.get(result);
      if (counter == null) {
        if (closed) {
          return;
        }
        counter = hedgesByResult.computeIfAbsent(result, r -> unlessClosed(
            Counter.builder("fairway.hedges")
                .description("Hedged calls: second copies sent, won (their response was used), or not sent for lack of budget or of a free worker")
                .tag("service", service)
                .tag("balancer", balancer)
                .tag("result", r)
                .register(registry)));
      }
      counter.increment();
    }

    @Override
    void hedging(ServiceHedging hedging) {
      extraLoad = Gauge.builder("fairway.hedges.extra.load", hedging, ServiceHedging::extraLoad)
          .description("Hedges sent per call of the service over the last 10 s (0.05 = 5% extra calls)")
          .tag("service", service)
          .tag("balancer", balancer)
          .strongReference(true)
          .register(registry);
    }

    @Override
    void budgetExhausted() {
      budgetExhausted.increment();
    }

    @Override
    void leaked() {
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
    LoadReportMeters loadReports() {
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
      hedgesByResult.values().forEach(registry::remove);
      hedgesByResult.clear();
      remove(extraLoad);
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
