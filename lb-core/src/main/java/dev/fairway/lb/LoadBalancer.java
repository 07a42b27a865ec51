package dev.fairway.lb;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.ConnectException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;

/**
 * Chooses a target for each call to one service. Build one per service and share it: it is
 * thread-safe, and {@link #pick} is lock-free and allocates only the returned {@link Pick}.
 *
 * <pre>{@code
 * LoadBalancer orders = LoadBalancer.builder("orders")
 *     .targets(Target.of("10.0.0.1", 8080), Target.of("10.0.0.2", 8080))
 *     .strategy(Strategy.leastResponseTime())
 *     .build();
 * Pick pick = orders.pick();
 * try {
 *   call(pick.target());
 *   pick.success();
 * } catch (IOException e) {
 *   pick.failure(e);
 * }
 * }</pre>
 *
 * <p>How it works: every change of membership (from the {@link TargetSource}) or health (passive
 * ejection, active probes, slow start) rebuilds an immutable snapshot of the pickable targets and the
 * strategy's structures, published with one volatile write. A pick reads that snapshot once.
 * Per-target state (in-flight count, latency average, breaker) lives as long as the target's id stays
 * in the list.
 *
 * <p>Panic mode: when fewer than the panic threshold (default 50%) of the targets are healthy, picks go
 * to every known target rather than overloading the few healthy ones or failing (as Envoy does).
 */
public final class LoadBalancer implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger(LoadBalancer.class.getName());
  private static final int SLOW_START_STEPS = 10;

  private final String service;
  private final TargetSource source;
  private final boolean ownsSource;
  private final BuiltinStrategy strategyDescription;
  private final StrategyInstance strategy;
  private final PassiveHealth passiveHealth;
  private final int skippableWindow;
  private final long slowStartNanos;
  private final int panicThresholdPercent;
  private final LongSupplier ticker;
  private final BalancerContext context;
  private final MeterRegistry registry;
  private final BalancerMetrics metrics;
  private final ReentrantLock rebuildLock = new ReentrantLock();
  private final ActiveHealthChecker activeHealth;
  private final ActiveHealth activeHealthConfig;
  private final AutoCloseable subscription;
  private final java.util.concurrent.CopyOnWriteArrayList<LoadBalancerListener> listeners =
      new java.util.concurrent.CopyOnWriteArrayList<>();

  /** Published via volatile; never mutated after publication. */
  private volatile TargetSnapshot snapshot;
  private volatile boolean closed;

  // Guarded by rebuildLock.
  private Map<String, TrackedTarget> membersById = new LinkedHashMap<>();
  private TrackedTarget[] members = new TrackedTarget[0];
  private long membershipVersion;
  private boolean sawTargets;
  private boolean panicLogged;

  private LoadBalancer(Builder b) {
    this.service = b.service;
    this.source = b.source;
    this.ownsSource = b.ownsSource;
    this.strategyDescription = (BuiltinStrategy) b.strategy;
    this.passiveHealth = b.passiveHealth;
    this.skippableWindow = b.passiveHealth.skippableWindow();
    this.slowStartNanos = b.slowStart.toNanos();
    this.panicThresholdPercent = b.panicThresholdPercent;
    this.ticker = b.ticker;
    this.context = new BalancerContext(service, b.random, b.ticker, b.localZone, b.latencyDecay.toNanos());
    this.strategy = strategyDescription.attach(context);
    this.registry = b.registry;
    this.activeHealthConfig = b.activeHealth;
    this.snapshot =
        new TargetSnapshot(0, members, new boolean[0], members, new long[0], false, Long.MAX_VALUE,
            "no targets known yet (the target source has not delivered a list)", strategy, null);
    this.metrics = registry == null ? BalancerMetrics.NOOP : BalancerMetrics.micrometer(registry, service, () -> snapshot);
    // The first log call initialises the logging backend (tens of ms): do it now, not mid-ejection.
    LOG.isLoggable(System.Logger.Level.INFO);
    this.subscription = source.subscribe(this::onTargets);
    if (b.activeHealth != null) {
      activeHealth = new ActiveHealthChecker(service, b.activeHealth, new ActiveHealthChecker.Listener() {
        @Override
        public TrackedTarget[] members() {
          return snapshot.members;
        }

        @Override
        public void probed(TrackedTarget target, boolean healthy) {
          onProbe(target, healthy);
        }
      });
      activeHealth.start();
    } else {
      activeHealth = null;
    }
  }

  /** A builder for the balancer of {@code service} (the logical name, used in messages and metrics). */
  public static Builder builder(String service) {
    if (service == null || service.isBlank()) {
      throw new IllegalArgumentException("service: " + Target.quote(service) + " (expected: a non-blank name)");
    }
    return new Builder(service);
  }

  /**
   * Registers a listener for membership changes from now on (it is not told of the current members;
   * read {@link #status()} for those). Closing the returned handle unregisters it.
   */
  public AutoCloseable addListener(LoadBalancerListener listener) {
    if (listener == null) {
      throw new IllegalArgumentException("listener: null (expected: a LoadBalancerListener)");
    }
    listeners.add(listener);
    return () -> listeners.remove(listener);
  }

  /** {@code pick(null, Set.of())}. */
  public Pick pick() throws NoTargetAvailableException {
    return pick(null, null);
  }

  /** {@code pick(affinityKey, Set.of())}. */
  public Pick pick(String affinityKey) throws NoTargetAvailableException {
    return pick(affinityKey, null);
  }

  /**
   * Chooses a target and takes an in-flight slot on it; complete the returned {@link Pick} exactly
   * once. Never blocks, except with {@link Strategy#concurrencyLimited} when every target is at its
   * hard limit (then at most its wait time).
   *
   * @param affinityKey the key for the affinity strategies, or null for none
   * @param exclude targets not to choose (say, ones this call already tried); null or empty for none
   * @throws NoTargetAvailableException naming the service and the reason when no target can be chosen
   */
  public Pick pick(String affinityKey, Set<Target> exclude) throws NoTargetAvailableException {
    Set<Target> ex = exclude == null || exclude.isEmpty() ? null : exclude;
    TargetSnapshot s = snapshot;
    long now = ticker.getAsLong();
    if (now >= s.reviewAtNanos) {
      s = review(now);
    }
    Selector selector = s.selector;
    if (selector == null) {
      throw NoTargetAvailableException.of(service, s.unavailableReason);
    }
    TrackedTarget t = selector.select(affinityKey, ex, now);
    if (t == null) {
      throw NoTargetAvailableException.of(service, "all " + s.pickable.length + " available targets are excluded");
    }
    if (t == Selector.AT_CAPACITY) {
      t = awaitSlot(affinityKey, ex, s);
      now = ticker.getAsLong();
    } else if (!selector.acquiresSlot()) {
      t.acquire();
    }
    if (s.panic) {
      metrics.panicPick();
    }
    return new PickHandle(this, t, now);
  }

  /** Every known target with its state, in-flight count and latency average, in the source's order. */
  public List<TargetStatus> status() {
    TrackedTarget[] m = snapshot.members;
    List<TargetStatus> out = new ArrayList<>(m.length);
    for (TrackedTarget t : m) {
      out.add(new TargetStatus(t.target, t.state, t.inFlight, t.ewmaNanos / 1e6));
    }
    return List.copyOf(out);
  }

  public String service() {
    return service;
  }

  /** The strategy this balancer was built with. */
  public Strategy strategy() {
    return strategyDescription;
  }

  /** The registry given to the builder, for integrations that add their own meters. */
  public Optional<MeterRegistry> meterRegistry() {
    return Optional.ofNullable(registry);
  }

  /**
   * Stops listening to the target source (and closes it if it was built from
   * {@link Builder#targets(Target...)}), stops active health checks, removes this balancer's meters,
   * and wakes callers waiting for a slot. Later picks fail. Idempotent.
   */
  @Override
  public void close() {
    rebuildLock.lock();
    try {
      if (closed) {
        return;
      }
      closed = true;
      TrackedTarget[] none = new TrackedTarget[0];
      snapshot = new TargetSnapshot(membershipVersion + 1, none, new boolean[0], none, new long[0], false,
          Long.MAX_VALUE, "the balancer is closed", strategy, null);
    } finally {
      rebuildLock.unlock();
    }
    try {
      subscription.close();
    } catch (Exception e) {
      LOG.log(System.Logger.Level.DEBUG, "unsubscribing from the target source failed", e);
    }
    if (ownsSource) {
      source.close();
    }
    if (activeHealth != null) {
      activeHealth.close();
    }
    strategy.close();
    metrics.close();
    fire(LoadBalancerListener::closed);
    listeners.clear();
  }

  @Override
  public String toString() {
    return "LoadBalancer{" + service + ", " + strategyDescription.name() + ", " + snapshot.pickable.length + "/"
        + snapshot.members.length + " pickable}";
  }

  // ---------------------------------------------------------------- completion (called by PickHandle)

  long nanoTime() {
    return ticker.getAsLong();
  }

  void onSuccess(TrackedTarget t, long startNanos, long recordedLatencyNanos) {
    long now = ticker.getAsLong();
    long latency = recordedLatencyNanos >= 0 ? recordedLatencyNanos : Math.max(0, now - startNanos);
    t.recordLatency(latency, now, context.tauNanos);
    t.releaseSlot();
    t.succeeded();
    CircuitBreaker breaker = t.breaker;
    if (breaker != null) {
      if (t.halfOpen || skippableWindow == 0 || t.shouldRecordSuccess(skippableWindow)) {
        breaker.onSuccess(latency, TimeUnit.NANOSECONDS);
      }
      if (t.halfOpen) {
        healthChange(() -> restore(t));
      }
    }
    strategy.onRelease(t);
  }

  void onFailure(TrackedTarget t, long startNanos, Throwable cause) {
    long now = ticker.getAsLong();
    long elapsed = Math.max(0, now - startNanos);
    // A failure never makes a target look faster than its average (a fast error is no fast answer),
    // and never compounds: repeated failures leave the average where it was. Ejection handles them.
    t.recordLatency(Math.max(elapsed, (long) t.ewmaNanos), now, context.tauNanos);
    t.releaseSlot();
    t.invalidateAffinity();
    if (strategy.affinityTable() != null) {
      metrics.affinityInvalidated();
    }
    CircuitBreaker breaker = t.breaker;
    if (breaker != null) {
      t.resetRecordedSuccesses();
      int inARow = t.failedInARow();
      breaker.onError(elapsed, TimeUnit.NANOSECONDS, cause == null ? new Exception("failure") : cause);
      String reason = null;
      if (isConnectionRefused(cause)) {
        reason = "connection refused";
      } else if (t.halfOpen) {
        reason = "failed its trial call";
      } else if (passiveHealth.consecutiveFailures > 0 && inARow >= passiveHealth.consecutiveFailures) {
        reason = inARow + " failures in a row";
      } else if (breaker.getState() == CircuitBreaker.State.OPEN) {
        reason = "failure rate " + breaker.getMetrics().getFailureRate() + "% over its last calls";
      }
      if (reason != null && !t.ejected) {
        ejectNow(t, now, reason);
      }
    }
    strategy.onRelease(t);
  }

  void onRelease(TrackedTarget t) {
    t.releaseSlot();
    strategy.onRelease(t);
  }

  private static boolean isConnectionRefused(Throwable cause) {
    for (int depth = 0; cause != null && depth < 8; depth++, cause = cause.getCause()) {
      if (cause instanceof ConnectException) {
        return true;
      }
    }
    return false;
  }

  // ---------------------------------------------------------------- health (under rebuildLock)

  /** Applies {@code change} under the rebuild lock and rebuilds if it reports a change. */
  private void healthChange(java.util.function.BooleanSupplier change) {
    rebuildLock.lock();
    try {
      if (!closed && change.getAsBoolean()) {
        rebuild(ticker.getAsLong());
      }
    } finally {
      rebuildLock.unlock();
    }
  }

  /**
   * Ejects {@code t}: the new snapshot is published first, so picks stop going to the target at once;
   * the breaker transition and the log line follow.
   */
  private void ejectNow(TrackedTarget t, long now, String reason) {
    String refusal = null;
    long duration = 0;
    rebuildLock.lock();
    try {
      if (closed || t.ejected || t.removed) {
        return;
      }
      int ejectedNow = 0;
      for (TrackedTarget m : members) {
        if (m.ejected) {
          ejectedNow++;
        }
      }
      int maxEjected = Math.max(1, members.length * passiveHealth.maxEjectionPercent / 100);
      if (ejectedNow >= maxEjected) {
        refusal = ejectedNow + " of " + members.length + " targets are ejected already (max "
            + passiveHealth.maxEjectionPercent + "%)";
        if (t.breaker.getState() != CircuitBreaker.State.CLOSED) {
          t.breaker.transitionToClosedState();
        }
        t.halfOpen = false;
        t.resetRecordedSuccesses();
        t.consecutiveFailures = 0; // start counting again rather than retrying the ejection on every failure
      } else {
        t.ejections++;
        t.ejected = true;
        t.halfOpen = false;
        t.probeSuccesses = 0; // only probes passed after the ejection may end it early
        t.warmingSinceNanos = Long.MIN_VALUE;
        duration = passiveHealth.ejectionNanos(t.ejections);
        t.ejectedUntilNanos = now + duration;
        rebuild(now); // publish first
        if (t.breaker.getState() != CircuitBreaker.State.OPEN) {
          t.breaker.transitionToOpenState();
        }
        metrics.ejected(t);
      }
    } finally {
      rebuildLock.unlock();
    }
    if (refusal != null) {
      LOG.log(System.Logger.Level.INFO, "{0}: not ejecting {1} ({2}): {3}", service, t.target.id(), reason, refusal);
    } else {
      LOG.log(System.Logger.Level.INFO, "{0}: ejected {1} for {2} ms ({3}, ejection #{4})",
          service, t.target.id(), duration / 1_000_000, reason, t.ejections);
    }
  }

  /** A half-open target's trial call succeeded: it is back for good. */
  private boolean restore(TrackedTarget t) {
    if (!t.halfOpen) {
      return false;
    }
    t.halfOpen = false;
    t.ejections = 0;
    t.resetRecordedSuccesses(); // the breaker's window was reset: feed it again
    if (t.breaker.getState() != CircuitBreaker.State.CLOSED) {
      t.breaker.transitionToClosedState();
    }
    return true;
  }

  private void onProbe(TrackedTarget t, boolean healthy) {
    rebuildLock.lock();
    try {
      if (closed || t.removed) {
        return;
      }
      ActiveHealth cfg = activeHealthConfig;
      boolean changed = false;
      if (healthy) {
        t.probeFailures = 0;
        t.probeSuccesses++;
        if (t.probeSuccesses >= cfg.healthyThreshold && (t.activeUnhealthy || t.ejected)) {
          // Passing probes also end a passive ejection early (as Envoy does by default): the target
          // then gets its half-open trial at once instead of after the rest of its ejection time.
          long now = ticker.getAsLong();
          if (t.ejected) {
            t.ejectedUntilNanos = now;
          } else {
            startWarming(t, now);
            t.ewmaNanos = 0; // measure it afresh
          }
          t.activeUnhealthy = false;
          changed = true;
          LOG.log(System.Logger.Level.INFO, "{0}: {1} passed {2} health checks, back in service",
              service, t.target.id(), t.probeSuccesses);
        }
      } else {
        t.probeSuccesses = 0;
        t.probeFailures++;
        if (!t.activeUnhealthy && t.probeFailures >= cfg.unhealthyThreshold) {
          t.activeUnhealthy = true;
          changed = true;
          LOG.log(System.Logger.Level.WARNING, "{0}: {1} failed {2} health checks, out of service",
              service, t.target.id(), t.probeFailures);
        }
      }
      if (changed) {
        rebuild(ticker.getAsLong());
      }
    } finally {
      rebuildLock.unlock();
    }
  }

  private void startWarming(TrackedTarget t, long now) {
    t.warmingSinceNanos = slowStartNanos > 0 ? now : Long.MIN_VALUE;
  }

  /** Called from a pick whose snapshot is due for review; never blocks. */
  private TargetSnapshot review(long now) {
    if (rebuildLock.tryLock()) {
      try {
        if (!closed && now >= snapshot.reviewAtNanos) {
          rebuild(now);
        }
      } finally {
        rebuildLock.unlock();
      }
    }
    return snapshot;
  }

  // ---------------------------------------------------------------- membership

  private void onTargets(List<Target> list) {
    List<Target> joined = new java.util.ArrayList<>();
    List<Target> left = new java.util.ArrayList<>();
    applyTargets(list, joined, left);
    for (Target t : joined) {
      fire(l -> l.targetAdded(t));
    }
    for (Target t : left) {
      fire(l -> l.targetRemoved(t));
    }
  }

  private void fire(java.util.function.Consumer<LoadBalancerListener> event) {
    for (LoadBalancerListener l : listeners) {
      try {
        event.accept(l);
      } catch (RuntimeException e) {
        LOG.log(System.Logger.Level.WARNING, service + ": a LoadBalancerListener failed", e);
      }
    }
  }

  private void applyTargets(List<Target> list, List<Target> joined, List<Target> left) {
    rebuildLock.lock();
    try {
      if (closed) {
        return;
      }
      long now = ticker.getAsLong();
      Map<String, TrackedTarget> next = new LinkedHashMap<>();
      boolean changed = list.size() != membersById.size();
      for (Target target : list) {
        if (target == null) {
          LOG.log(System.Logger.Level.WARNING, "{0}: the target source delivered a null target; skipped", service);
          continue;
        }
        if (next.containsKey(target.id())) {
          LOG.log(System.Logger.Level.WARNING, "{0}: duplicate target id {1}; kept the first", service, target.id());
          continue;
        }
        TrackedTarget existing = membersById.get(target.id());
        if (existing != null) {
          if (!existing.target.sameAs(target)) {
            existing.target = target;
            changed = true;
          }
          next.put(target.id(), existing);
        } else {
          TrackedTarget added = new TrackedTarget(target, newBreaker(target));
          if (sawTargets) {
            startWarming(added, now);
          }
          next.put(target.id(), added);
          metrics.targetAdded(added);
          joined.add(target);
          changed = true;
        }
      }
      for (TrackedTarget old : membersById.values()) {
        if (!next.containsKey(old.target.id())) {
          old.removed = true;
          old.pickable = false;
          metrics.targetRemoved(old);
          left.add(old.target);
          changed = true;
        }
      }
      if (!changed) { // same ids, same descriptions: did the order change?
        int i = 0;
        for (TrackedTarget t : next.values()) {
          if (members[i++] != t) {
            changed = true;
            break;
          }
        }
      }
      if (changed) {
        membershipVersion++;
      }
      membersById = next;
      members = next.values().toArray(new TrackedTarget[0]);
      sawTargets |= !next.isEmpty();
      rebuild(now);
    } catch (RuntimeException e) {
      joined.clear();
      left.clear();
      LOG.log(System.Logger.Level.ERROR, service + ": could not apply a new target list; keeping the last one", e);
    } finally {
      rebuildLock.unlock();
    }
  }

  private CircuitBreaker newBreaker(Target target) {
    return passiveHealth.enabled() ? CircuitBreaker.of(service + "/" + target.id(), passiveHealth.config) : null;
  }

  /** Builds and publishes a new snapshot from {@link #members} and their health. Under rebuildLock. */
  private void rebuild(long now) {
    TrackedTarget[] m = members;
    long reviewAt = Long.MAX_VALUE;
    int healthy = 0;
    for (TrackedTarget t : m) {
      if (t.ejected && now - t.ejectedUntilNanos >= 0) {
        t.ejected = false;
        t.halfOpen = true; // trial: the first success restores it, a failure ejects it again
        if (t.breaker.getState() == CircuitBreaker.State.OPEN) {
          t.breaker.transitionToHalfOpenState();
        }
        t.ewmaNanos = 0; // its old latency says nothing about it now: measure it afresh
        startWarming(t, now);
      }
      if (t.ejected) {
        reviewAt = Math.min(reviewAt, t.ejectedUntilNanos);
      }
      if (t.warmingSinceNanos != Long.MIN_VALUE && now - t.warmingSinceNanos >= slowStartNanos) {
        t.warmingSinceNanos = Long.MIN_VALUE;
      }
      TargetState state =
          t.ejected ? TargetState.EJECTED
              : t.activeUnhealthy || !t.target.healthy() ? TargetState.UNHEALTHY
              : t.warmingSinceNanos != Long.MIN_VALUE ? TargetState.WARMING
              : TargetState.HEALTHY;
      t.state = state;
      if (state == TargetState.HEALTHY || state == TargetState.WARMING) {
        healthy++;
      }
    }
    boolean panic = m.length > 0 && healthy * 100L < (long) panicThresholdPercent * m.length;
    if (panic != panicLogged) {
      panicLogged = panic;
      LOG.log(panic ? System.Logger.Level.WARNING : System.Logger.Level.INFO,
          panic ? "{0}: only {1} of {2} targets healthy: panic mode, picking across all of them"
              : "{0}: {1} of {2} targets healthy: leaving panic mode",
          service, healthy, m.length);
    }
    int count = panic ? m.length : healthy;
    TrackedTarget[] pickable = new TrackedTarget[count];
    boolean[] memberPickable = new boolean[m.length];
    long[] weights = new long[count];
    int k = 0;
    for (int i = 0; i < m.length; i++) {
      TrackedTarget t = m[i];
      boolean ok = panic || t.state == TargetState.HEALTHY || t.state == TargetState.WARMING;
      t.pickable = ok;
      memberPickable[i] = ok;
      if (!ok) {
        continue;
      }
      long weight = 100L * t.target.weight();
      if (t.warmingSinceNanos != Long.MIN_VALUE) {
        // Slow start: 10% of the weight, rising in equal steps to 100% at the end of the window.
        long elapsed = now - t.warmingSinceNanos;
        long step = Math.min(SLOW_START_STEPS, elapsed * SLOW_START_STEPS / slowStartNanos);
        weight = t.target.weight() * (10L + 90L * step / SLOW_START_STEPS);
        long nextStep = t.warmingSinceNanos + (step + 1) * slowStartNanos / SLOW_START_STEPS;
        reviewAt = Math.min(reviewAt, nextStep);
      }
      pickable[k] = t;
      weights[k] = Math.max(1, weight);
      k++;
    }
    String reason = null;
    if (count == 0) {
      reason = m.length == 0
          ? (sawTargets ? "no targets known (the target source's list is empty)"
              : "no targets known yet (the target source has not delivered a list)")
          : "all " + m.length + " targets are unhealthy or ejected";
    }
    snapshot = new TargetSnapshot(membershipVersion, m, memberPickable, pickable, weights, panic, reviewAt, reason,
        strategy, snapshot.selector);
  }

  // ---------------------------------------------------------------- concurrency-limited waiting

  private TrackedTarget awaitSlot(String key, Set<Target> exclude, TargetSnapshot first)
      throws NoTargetAvailableException {
    ConcurrencyLimitedStrategy.Instance limited = (ConcurrencyLimitedStrategy.Instance) strategy;
    ConcurrencyLimitedStrategy cfg = limited.strategy();
    String atHard = "all " + first.pickable.length + " targets are at their hard limit of " + cfg.hardLimit
        + " calls in flight";
    long waitNanos = cfg.maxWait.toNanos();
    if (waitNanos == 0) {
      throw NoTargetAvailableException.of(service, atHard);
    }
    Thread me = Thread.currentThread();
    if (!limited.queue.enter(me)) {
      throw NoTargetAvailableException.of(service, atHard + ", and " + cfg.maxQueue + " callers are already waiting");
    }
    long deadline = System.nanoTime() + waitNanos;
    try {
      for (;;) {
        if (closed) {
          throw NoTargetAvailableException.of(service, "the balancer is closed");
        }
        if (limited.queue.isHead(me)) {
          TargetSnapshot s = snapshot;
          if (s.selector == null) {
            throw NoTargetAvailableException.of(service, s.unavailableReason);
          }
          TrackedTarget t = s.selector.select(key, exclude, ticker.getAsLong());
          if (t == null) {
            throw NoTargetAvailableException.of(service, "all " + s.pickable.length + " available targets are excluded");
          }
          if (t != Selector.AT_CAPACITY) {
            return t;
          }
        }
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          throw NoTargetAvailableException.of(service, atHard + "; waited " + cfg.maxWait.toMillis() + " ms for a slot");
        }
        LockSupport.parkNanos(this, left);
        if (Thread.interrupted()) {
          me.interrupt();
          throw NoTargetAvailableException.of(service, "interrupted while waiting for a slot");
        }
      }
    } finally {
      limited.queue.leave(me);
    }
  }

  // ---------------------------------------------------------------- builder

  /** Configures a {@link LoadBalancer}. Each setter validates its argument; {@link #build()} the whole. */
  public static final class Builder {
    private final String service;
    private TargetSource source;
    private boolean ownsSource;
    private Strategy strategy;
    private PassiveHealth passiveHealth;
    private ActiveHealth activeHealth;
    private Duration slowStart;
    private String localZone;
    private MeterRegistry registry;
    private Integer panicThreshold;
    private int panicThresholdPercent = 50;
    LongSupplier ticker = System::nanoTime;
    RandomSource random = RandomSource.THREAD_LOCAL;
    Duration latencyDecay = Duration.ofSeconds(5);

    private Builder(String service) {
      this.service = service;
    }

    /** Where targets come from. The balancer subscribes to it and does not close it. */
    public Builder targets(TargetSource source) {
      requireUnset("targets", this.source);
      if (source == null) {
        throw new IllegalArgumentException("targets: null (expected: a TargetSource)");
      }
      this.source = source;
      this.ownsSource = false;
      return this;
    }

    /** A fixed list of targets (at least one, unique ids). */
    public Builder targets(Target... targets) {
      requireUnset("targets", this.source);
      if (targets == null || targets.length == 0) {
        throw new IllegalArgumentException("targets: " + (targets == null ? "null" : "[]")
            + " (expected: at least one target)");
      }
      this.source = TargetSource.of(targets);
      this.ownsSource = true;
      return this;
    }

    /** Default: {@link Strategy#leastResponseTime()}. */
    public Builder strategy(Strategy strategy) {
      requireUnset("strategy", this.strategy);
      if (!(strategy instanceof BuiltinStrategy)) {
        throw new IllegalArgumentException("strategy: " + strategy + " (expected: one of Strategy's factories)");
      }
      this.strategy = strategy;
      return this;
    }

    /** Default: {@link PassiveHealth#defaults()}. */
    public Builder passiveHealth(PassiveHealth passiveHealth) {
      requireUnset("passiveHealth", this.passiveHealth);
      if (passiveHealth == null) {
        throw new IllegalArgumentException("passiveHealth: null (expected: PassiveHealth.defaults(), .disabled() or .of(config))");
      }
      this.passiveHealth = passiveHealth;
      return this;
    }

    /** Default: none. */
    public Builder activeHealth(ActiveHealth activeHealth) {
      requireUnset("activeHealth", this.activeHealth);
      if (activeHealth == null) {
        throw new IllegalArgumentException("activeHealth: null (expected: ActiveHealth.of(probe, interval))");
      }
      this.activeHealth = activeHealth;
      return this;
    }

    /**
     * A target that joins (after the first list) or returns from ejection or unhealthiness starts at
     * 10% of its weight and ramps up to 100% over {@code window} (in 10 steps). {@code Duration.ZERO}
     * (the default) turns slow start off; at most 1 hour.
     */
    public Builder slowStart(Duration window) {
      requireUnset("slowStart", this.slowStart);
      if (window == null || window.isNegative() || window.compareTo(Duration.ofHours(1)) > 0) {
        throw new IllegalArgumentException("slowStart: " + window + " (expected: 0s..1h)");
      }
      this.slowStart = window;
      return this;
    }

    /** The caller's zone, for closeness in {@link Strategy#concurrencyLimited}. Default {@code ""}. */
    public Builder localZone(String zone) {
      requireUnset("localZone", this.localZone);
      if (zone == null) {
        throw new IllegalArgumentException("localZone: null (expected: a zone name, or \"\" for none)");
      }
      this.localZone = zone;
      return this;
    }

    /** Where the balancer's meters go. Default: none (and no metric work at all). */
    public Builder meterRegistry(MeterRegistry registry) {
      requireUnset("meterRegistry", this.registry);
      if (registry == null) {
        throw new IllegalArgumentException("meterRegistry: null (expected: a MeterRegistry)");
      }
      this.registry = registry;
      return this;
    }

    /**
     * Below this percentage of healthy targets, picks go to all targets (panic mode). 0 turns panic
     * mode off. Default 50.
     */
    public Builder panicThreshold(int percent) {
      requireUnset("panicThreshold", this.panicThreshold);
      if (percent < 0 || percent > 100) {
        throw new IllegalArgumentException("panicThreshold: " + percent + " (expected: 0..100)");
      }
      this.panicThreshold = percent;
      return this;
    }

    Builder ticker(LongSupplier ticker) {
      this.ticker = ticker;
      return this;
    }

    Builder random(RandomSource random) {
      this.random = random;
      return this;
    }

    Builder latencyDecay(Duration decay) {
      this.latencyDecay = decay;
      return this;
    }

    /**
     * @throws IllegalArgumentException naming the field if the configuration is incomplete
     */
    public LoadBalancer build() {
      if (source == null) {
        throw new IllegalArgumentException("targets: not set (expected: targets(TargetSource) or targets(Target...))");
      }
      if (strategy == null) {
        strategy = Strategy.leastResponseTime();
      }
      if (passiveHealth == null) {
        passiveHealth = PassiveHealth.defaults();
      }
      if (slowStart == null) {
        slowStart = Duration.ZERO;
      }
      if (localZone == null) {
        localZone = "";
      }
      if (panicThreshold != null) {
        panicThresholdPercent = panicThreshold;
      }
      return new LoadBalancer(this);
    }

    private static void requireUnset(String field, Object current) {
      if (current != null) {
        throw new IllegalArgumentException(field + ": already set to " + current + " (expected: set once)");
      }
    }
  }
}
