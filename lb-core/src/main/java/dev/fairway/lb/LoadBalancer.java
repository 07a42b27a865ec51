package dev.fairway.lb;

import static dev.fairway.lb.internal.Args.requireArgument;
import static dev.fairway.lb.internal.Args.requireUnset;

import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

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
 * ejection, active probes, the end of an ejection or a warm-up) is applied by one serialised,
 * collapsing updater that rebuilds an immutable snapshot of the pickable targets and the strategy's
 * structures and publishes it with one volatile write. A pick reads that snapshot once; a completion
 * never waits for a rebuild. Per-target state (in-flight count, latency average, health) lives as
 * long as the target's id stays in the list.
 *
 * <p>Panic mode: when fewer than the panic threshold (default 50%) of the targets are healthy, picks go
 * to every known target rather than overloading the few healthy ones or failing (as Envoy does).
 */
public final class LoadBalancer implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger(LoadBalancer.class.getName());

  private final String service;
  private final TargetSource source;
  private final boolean ownsSource;
  /** The strategy as configured (stateless). */
  private final Strategy strategy;
  /** The strategy attached to this balancer: its state, and the selector for each snapshot. */
  private final AttachedStrategy attached;
  private final LongSupplier ticker;
  private final @Nullable MeterRegistry registry;
  private final BalancerMetrics metrics;
  /** The {@code balancer} tag value: the builder's name (or the service), made unique in the registry. */
  private final String name;
  private final BalancerUpdater updater;
  private final Completions completions;
  private final Supplier<PublishedSnapshot> published;
  private final AutoCloseable subscription;
  private final @Nullable AutoCloseable positionSubscription;
  private final @Nullable ActiveHealthChecker activeHealth;
  private final AtomicBoolean closed = new AtomicBoolean();
  private final HealthEpoch healthEpoch;
  private final OtherClients otherClients;

  private LoadBalancer(Builder b, TargetSource source, boolean ownsSource) {
    this.service = b.service;
    this.ownsSource = ownsSource;
    this.source = source;
    this.strategy = b.strategyOrDefault();
    this.ticker = b.ticker;
    this.registry = b.registry;
    PassiveHealth passive = b.passiveHealthOrDefault();
    SlowStart slowStart = new SlowStart(b.slowStartOrDefault().toNanos());
    BalancerContext context = new BalancerContext(service, b.random, ticker, b.localZoneOrDefault(),
        b.latencyDecay.toNanos());
    // With a local zone the strategy decides itself whether zone-aware routing wraps it; without one
    // the balancer is exactly the strategy, with no extra step on the pick path.
    this.attached = ((BuiltinStrategy) strategy).attachTo(context);
    this.otherClients = context.otherClients;
    this.published = this::published; // read later, by the metrics and by waiting callers
    this.name = registry == null ? b.nameOrDefault() : BalancerNames.claim(registry, b.nameOrDefault());
    this.metrics = registry == null ? BalancerMetrics.NOOP
        : BalancerMetrics.micrometer(registry, service, name, b.targetMeterLimitOrDefault(), published, ticker,
            attached.splitsByZone());
    TargetHealth.Rules rules = new TargetHealth.Rules(slowStart, passive, b.activeHealth);
    this.healthEpoch = rules.epoch;
    this.updater = new BalancerUpdater(service, ticker, attached,
        new SnapshotBuilder(b.panicThresholdOrDefault(), slowStart, b.subset), rules,
        passive, metrics);
    PassiveHealthChecker passiveChecker = new PassiveHealthChecker(service, passive, updater::members, updater);
    this.completions = new Completions(context, attached, passiveChecker, metrics);
    // The first log call initialises the logging backend (tens of ms): do it now, not mid-ejection.
    LOG.isLoggable(System.Logger.Level.INFO);
    // The position first, so the first list is already cut to this client's window.
    Subset subset = b.subset;
    this.positionSubscription = subset == null ? null : subset.coordinate().subscribe(updater::offerPosition);
    try {
      this.subscription = source.subscribe(updater::offerTargets);
    } catch (RuntimeException e) {
      closeQuietly(positionSubscription, "unsubscribing from the peer coordinate");
      if (ownsSource) {
        source.close();
      }
      if (registry != null) {
        BalancerNames.release(registry, name);
      }
      throw e;
    }
    updater.startMetrics(); // only now: a failed subscription leaves no meters behind
    ActiveHealth active = b.activeHealth;
    this.activeHealth = active == null ? null
        : ActiveHealthChecker.start(service, active,
            // with a subset, probe the window (what this client connects to), not every target
            subset == null ? updater::members : () -> updater.published().snapshot.members, this::onProbe);
  }

  /** A builder for the balancer of {@code service} (the logical name, used in messages and metrics). */
  public static Builder builder(String service) {
    requireArgument(service != null && !service.isBlank(), "service", service, "a non-blank name");
    return new Builder(service);
  }

  /**
   * Registers a listener for membership and health changes from now on (it is not told of the
   * current members; read {@link #status()} for those). Closing the returned handle unregisters it.
   */
  public AutoCloseable addListener(LoadBalancerListener listener) {
    requireArgument(listener != null, "listener", null, "a LoadBalancerListener");
    return updater.addListener(listener);
  }

  /** {@code pick(null, Set.of())}. */
  public Pick pick() throws NoTargetAvailableException {
    return pick(null, null);
  }

  /** {@code pick(affinityKey, Set.of())}. */
  public Pick pick(@Nullable String affinityKey) throws NoTargetAvailableException {
    return pick(affinityKey, null);
  }

  /**
   * Chooses a target and takes an in-flight slot on it; complete the returned {@link Pick} exactly
   * once. Never blocks, except with {@link Strategy#concurrencyLimited} when every target is at its
   * hard limit (then at most its wait time).
   *
   * <p>No target is a failure of the call, hence the checked exception: the caller has nowhere to
   * send it and must report that. {@link #pickWithFreeWorker(String, Set)} instead returns null
   * when every candidate is busy, since for an extra copy of a call that is an expected answer
   * ("do not send one"), not a failure; it too throws when there is no target at all.
   *
   * @param affinityKey the key for the affinity strategies, or null for none
   * @param exclude targets not to choose (say, ones this call already tried); null or empty for none
   * @throws NoTargetAvailableException naming the service and the reason when no target can be chosen
   */
  public Pick pick(@Nullable String affinityKey, @Nullable Set<Target> exclude) throws NoTargetAvailableException {
    @Nullable Set<Target> ex = exclude == null || exclude.isEmpty() ? null : exclude;
    long now = ticker.getAsLong();
    PublishedSnapshot s = updater.published();
    if (now >= s.reviewAtNanos) {
      updater.refresh(); // never waits: if another thread is applying changes, it applies this too
      s = updater.published();
    }
    Selector selector = s.selector;
    if (selector == null) {
      return pickSlowPath(affinityKey, ex, now, s, null); // fails, saying why
    }
    TrackedTarget t = selector.select(affinityKey, ex, now);
    if (t == null || s.trialTargets != 0 || (!s.panic && s.healthMark != healthEpoch.started)) {
      return pickSlowPath(affinityKey, ex, now, s, t);
    }
    // The common case, kept small so that it inlines into the caller: a target was chosen, nobody
    // is on trial, and no change to out of service can be missing from the snapshot (HealthEpoch).
    if (!selector.acquiresSlot()) {
      t.acquire();
    }
    if (s.panic) {
      metrics.panicPick();
    }
    return new PickHandle(completions, t, now, false);
  }

  /**
   * A pick on {@code target} itself, whatever the strategy would choose and whatever its health:
   * for an attempt the caller sends there anyway, such as Spring Cloud LoadBalancer's retry on the
   * same instance. The attempt then counts as any other: it holds an in-flight slot, and its
   * outcome reaches passive health and the latency average. It takes no trial permit of a
   * half-open target and does not wait for a slot of {@link Strategy#concurrencyLimited}.
   * Allocates nothing beyond the handle, but looks the target up by id: not for every call.
   *
   * @throws NoTargetAvailableException if {@code target} (by id) is not one of this balancer's targets
   */
  public Pick pickTarget(Target target) throws NoTargetAvailableException {
    requireArgument(target != null, "target", null, "a Target");
    long now = ticker.getAsLong();
    for (TrackedTarget t : updater.published().snapshot.known) {
      if (t.target.id().equals(target.id()) && !t.removed) {
        t.acquire();
        return new PickHandle(completions, t, now, false);
      }
    }
    throw NoTargetAvailableException.of(service, "target " + target.id() + " is not one of its targets");
  }

  /**
   * A pick like {@link #pick(String, Set)}, but only among the targets that may have a worker free
   * right now; null, with no slot taken, when every candidate is known to be busy. Meant for extra
   * copies of a call (a hedge), which help only where they need not wait: one sent to a busy target
   * takes a worker another call was about to get.
   *
   * <p>A target counts as busy when this balancer is the only client it has seen on its targets and
   * its own calls on it reach the concurrency it learned from earlier answers (least queueing's cold
   * test, learned under every strategy), or when a fresh load report ({@link Pick#reportLoad}) says
   * every worker is busy (utilization 1 or more). A report is
   * never read as a free worker: a claim of one is no proof. A target about which nothing tells (in
   * a fleet without reports, or not measured yet) is not known to be busy, and may be chosen. Among the rest the
   * balancer's strategy chooses as {@link #pick(String, Set)} does. Allocates a set when some
   * target is left out: not for the pick path of every call.
   *
   * <p>Two ways to get nothing, on purpose: null when targets exist but all are busy (the caller's
   * call goes on without the copy, so this is an answer, not an error), and {@link
   * NoTargetAvailableException}, as from {@code pick}, when there is no target at all.
   *
   * @throws NoTargetAvailableException as {@link #pick(String, Set)}, when no target can be chosen at all
   */
  public @Nullable Pick pickWithFreeWorker(@Nullable String affinityKey, @Nullable Set<Target> exclude)
      throws NoTargetAvailableException {
    return pickAmongFree(affinityKey, exclude, null);
  }

  /**
   * A pick like {@link #pickWithFreeWorker(String, Set)}, where a target that is not known to have
   * a free worker (one known busy, or one about which nothing tells) is a candidate only if {@code
   * judge} accepts it: the caller's judgement of whether a copy that waits there still pays (the
   * OkHttp interceptor's hedges compare the target's response times with how long the first copy
   * has run). A target known to have a free worker is always a candidate. Null, with no slot taken,
   * when no candidate is left. {@code judge} runs on the calling thread, at most once per target.
   *
   * @throws NoTargetAvailableException as {@link #pick(String, Set)}, when no target can be chosen at all
   */
  public @Nullable Pick pickWithFreeWorker(@Nullable String affinityKey, @Nullable Set<Target> exclude,
      QueueJudge judge) throws NoTargetAvailableException {
    return pickAmongFree(affinityKey, exclude, java.util.Objects.requireNonNull(judge, "judge"));
  }

  /** What {@link #pickWithFreeWorker(String, Set, QueueJudge)} asks about a target not known to have a free worker. */
  @FunctionalInterface
  public interface QueueJudge {
    /**
     * Whether an extra copy of a call may still go to {@code target}, which may have to wait there:
     * {@code knownBusy} when the learned concurrency or a fresh load report says every worker is
     * busy, false when nothing this balancer knows tells.
     */
    boolean mayQueue(Target target, boolean knownBusy);
  }

  /**
   * Both {@code pickWithFreeWorker}s. Without a judge, a target not known to be busy is a
   * candidate; with one, a target not known to have a free worker is one only if it accepts it.
   */
  private @Nullable Pick pickAmongFree(@Nullable String affinityKey, @Nullable Set<Target> exclude,
      @Nullable QueueJudge judge) throws NoTargetAvailableException {
    long now = ticker.getAsLong();
    TrackedTarget[] pickable = updater.published().snapshot.pickable;
    boolean alone = !otherClients.present(now);
    Set<Target> busy = null;
    int candidates = 0;
    int busyCount = 0;
    for (TrackedTarget t : pickable) {
      if (Selector.excluded(t, exclude)) {
        continue;
      }
      candidates++;
      FleetLoad.WorkerState free = FleetLoad.workersForHedge(t, now, alone);
      boolean leftOut = judge == null
          ? free == FleetLoad.WorkerState.BUSY
          : free != FleetLoad.WorkerState.FREE && !judge.mayQueue(t.target, free == FleetLoad.WorkerState.BUSY);
      if (leftOut) {
        if (busy == null) {
          busy = exclude == null ? new HashSet<>() : new HashSet<>(exclude);
        }
        busy.add(t.target);
        busyCount++;
      }
    }
    if (busy == null) {
      return pick(affinityKey, exclude); // nothing left out: the ordinary pick (which fails if none is left)
    }
    return busyCount == candidates ? null : pick(affinityKey, busy);
  }

  /**
   * The pick from where {@link #pick} left it ({@code chosen} is what the selector of {@code s}
   * returned, its slot not yet taken), for everything but the common case: nothing chosen (wait for
   * a slot, or fail), a target on trial, or one that may have gone out of service since the snapshot
   * was built. Loops, excluding each target it gives back, until it has one or none is left.
   */
  private Pick pickSlowPath(@Nullable String affinityKey, @Nullable Set<Target> exclude, long nowNanos,
      PublishedSnapshot published, @Nullable TrackedTarget chosen) throws NoTargetAvailableException {
    @Nullable Set<Target> ex = exclude;
    long now = nowNanos;
    PublishedSnapshot s = published;
    TrackedTarget t = chosen;
    for (boolean first = true, trialsFull = false, justOut = false; ; first = false) {
      Selector selector = s.selector;
      if (selector == null) {
        throw NoTargetAvailableException.of(service, s.snapshot.unavailableReason);
      }
      if (!first) {
        t = selector.select(affinityKey, ex, now);
      }
      if (t == null) {
        t = attached.awaitSlot(affinityKey, ex, this.published); // a strategy with a capacity limit waits
        if (t == null) {
          throw NoTargetAvailableException.of(service, "all " + s.snapshot.pickable.length
              + " available targets are excluded" + (trialsFull ? " or on trial with every trial permit in use" : "")
              + (justOut ? " or just taken out of service" : ""));
        }
        now = ticker.getAsLong();
        s = updater.published();
      } else if (!selector.acquiresSlot()) {
        t.acquire();
      }
      if (!s.panic && s.healthMark != healthEpoch.started && t.health.outAt(now)) {
        // Ejected or unhealthy since this snapshot was built, and status() already says so: the
        // snapshot without it is on its way (another thread is applying changes). Choose again
        // without it, so no pick returns a target status() shows out. Asked only when a change to
        // out of service may be missing from the snapshot (HealthEpoch).
        completions.release(t, false);
        ex = excludingAlso(ex, t);
        justOut = true;
        continue;
      }
      int trial = s.trialTargets == 0 ? 0 : t.health.tryBeginTrial();
      if (trial < 0) { // half-open with every trial permit in use: choose again without it
        completions.release(t, false);
        ex = excludingAlso(ex, t);
        trialsFull = true;
        continue;
      }
      if (s.panic) {
        metrics.panicPick();
      }
      return new PickHandle(completions, t, now, trial > 0);
    }
  }

  private static Set<Target> excludingAlso(@Nullable Set<Target> exclude, TrackedTarget t) {
    Set<Target> more = exclude == null ? new HashSet<>() : new HashSet<>(exclude);
    more.add(t.target);
    return more;
  }

  /**
   * Every known target with its state as of now, in-flight count, latency average and fresh load
   * report, in the source's order.
   */
  public List<TargetStatus> status() {
    long now = ticker.getAsLong();
    TargetSnapshot s = updater.published().snapshot;
    TrackedTarget[] m = s.known;
    double[] share = s.knownShare;
    List<TargetStatus> out = new ArrayList<>(m.length);
    for (int i = 0; i < m.length; i++) {
      TrackedTarget t = m[i];
      boolean fresh = t.reportFresh(now, TargetLoad.REPORT_TTL_NANOS);
      out.add(new TargetStatus(t.target, t.health.stateAt(now), t.inFlight, t.ewmaNanos / 1e6,
          fresh ? t.reportedUtilization : Double.NaN, fresh ? t.reportedInFlight : Double.NaN,
          share == null ? 1.0 : share[i], t.health.outReasonAt(now), t.health.ejectedForNanosAt(now)));
    }
    return List.copyOf(out);
  }

  public String service() {
    return service;
  }

  /**
   * True while the balancer is in panic mode: fewer targets than the panic threshold are in
   * service, so picks go to every known target (see the class description). As of the latest
   * snapshot, which follows every health change.
   */
  public boolean panicMode() {
    return updater.published().snapshot.panic;
  }

  /** The strategy this balancer was built with. */
  public Strategy strategy() {
    return strategy;
  }

  /**
   * The value of this balancer's {@code balancer} meter tag: {@link Builder#name(String)}, else the
   * service name; when another open balancer already carries that value in the same registry,
   * {@code name#2} (then {@code #3}, ...: the lowest free number), logged once.
   */
  public String name() {
    return name;
  }

  /**
   * The value of the {@code target} tag under which this balancer's per-target meters, and an
   * integration's that follow {@link Builder#targetMeterLimit(int)}, count {@code target}: its
   * {@link Target#id()} while it holds one of the per-target series, else {@code "other"} (beyond the
   * limit, or not a member). Fixed from the moment the target joins until it leaves; without a
   * registry, its id. Reads one concurrent map: meant for registering a meter, not for every call.
   */
  public String targetTag(Target target) {
    requireArgument(target != null, "target", null, "a Target");
    return metrics.targetTag(target);
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
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    updater.close();
    closeQuietly(positionSubscription, "unsubscribing from the peer coordinate");
    closeQuietly(subscription, "unsubscribing from the target source");
    if (ownsSource) {
      source.close();
    }
    if (activeHealth != null) {
      activeHealth.close();
    }
    attached.close();
    metrics.close();
    if (registry != null) {
      BalancerNames.release(registry, name);
    }
  }

  private static void closeQuietly(@Nullable AutoCloseable handle, String what) {
    if (handle == null) {
      return;
    }
    try {
      handle.close();
    } catch (Exception e) {
      LOG.log(System.Logger.Level.DEBUG, what + " failed", e);
    }
  }

  @Override
  public String toString() {
    TargetSnapshot s = updater.published().snapshot;
    return "LoadBalancer{" + service + ", " + strategy.name() + ", " + s.pickable.length + "/"
        + s.known.length + " pickable}";
  }

  /** The snapshot and selector picks read now. */
  PublishedSnapshot published() {
    return updater.published();
  }

  /** The snapshot picks read now. */
  TargetSnapshot snapshot() {
    return updater.published().snapshot;
  }

  /** Callers waiting for a slot of {@link Strategy#concurrencyLimited}; 0 for other strategies. */
  int waitingForSlot() {
    return attached.waiting();
  }

  private void onProbe(TrackedTarget t, boolean healthy) {
    if (t.removed) {
      return;
    }
    HealthTransition moved = t.health.apply(t,
        healthy ? TargetHealth.Event.PROBE_PASSED : TargetHealth.Event.PROBE_FAILED, ticker.getAsLong(), null);
    if (moved != null) {
      updater.offerTransition(moved);
    }
  }

  // ---------------------------------------------------------------- builder

  /**
   * Configures a {@link LoadBalancer}. Each option may be set once (a second set is an
   * {@link IllegalStateException}); each setter validates its argument ({@link
   * IllegalArgumentException} naming field and value). Defaults are applied by {@link #build()}
   * without changing the builder, so one builder can build several balancers.
   */
  public static final class Builder {
    private final String service;
    // Unset (null) until its setter is called; the ...OrDefault() getters apply the defaults.
    private @Nullable TargetSource source;
    private @Nullable List<Target> fixedTargets;
    private @Nullable Strategy strategy;
    private @Nullable PassiveHealth passiveHealth;
    private @Nullable ActiveHealth activeHealth;
    private @Nullable Duration slowStart;
    private @Nullable String localZone;
    private @Nullable MeterRegistry registry;
    private @Nullable Integer panicThreshold;
    private @Nullable Subset subset;
    private @Nullable String name;
    private @Nullable Integer targetMeterLimit;
    LongSupplier ticker = System::nanoTime;
    RandomSource random = RandomSource.THREAD_LOCAL;
    Duration latencyDecay = Duration.ofSeconds(5);

    private Builder(String service) {
      this.service = service;
    }

    /** Where targets come from. The balancer subscribes to it and does not close it. */
    public Builder targets(TargetSource source) {
      requireUnset("targets", this.source != null ? this.source : fixedTargets);
      requireArgument(source != null, "targets", null, "a TargetSource");
      this.source = source;
      return this;
    }

    /** A fixed list of targets (at least one, unique ids); each balancer built gets its own source of them. */
    public Builder targets(Target... targets) {
      requireUnset("targets", this.source != null ? this.source : fixedTargets);
      requireArgument(targets != null && targets.length > 0, "targets", targets == null ? null : List.of(),
          "at least one target");
      TargetSource.of(targets).close(); // validates: no nulls, no duplicate ids
      this.fixedTargets = List.of(targets);
      return this;
    }

    /** Default: {@link Strategy#leastQueueing()}. */
    public Builder strategy(Strategy strategy) {
      requireUnset("strategy", this.strategy);
      requireArgument(strategy != null, "strategy", null, "one of Strategy's factories");
      this.strategy = strategy;
      return this;
    }

    /** Default: {@link PassiveHealth#defaults()}. */
    public Builder passiveHealth(PassiveHealth passiveHealth) {
      requireUnset("passiveHealth", this.passiveHealth);
      requireArgument(passiveHealth != null, "passiveHealth", null, "PassiveHealth.defaults(), .disabled() or .of(config)");
      this.passiveHealth = passiveHealth;
      return this;
    }

    /** Default: none. */
    public Builder activeHealth(ActiveHealth activeHealth) {
      requireUnset("activeHealth", this.activeHealth);
      requireArgument(activeHealth != null, "activeHealth", null, "ActiveHealth.of(probe, interval)");
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
      requireArgument(window != null && !window.isNegative() && window.compareTo(Duration.ofHours(1)) <= 0,
          "slowStart", window, "0s..1h");
      this.slowStart = window;
      return this;
    }

    /**
     * The caller's zone: turns on zone-aware routing, for every strategy. Default {@code ""}: off,
     * and then a balancer behaves, and costs, exactly as without zones.
     *
     * <p>With a zone, the strategy runs over the targets whose {@link Target#zone()} equals it while
     * that zone is at least as healthy (healthy weight over configured weight) as the whole set of
     * targets. When it is less healthy, it keeps that ratio of calls, {@code min(1, local health /
     * overall health)}, and the rest spill to the other zones, where the same strategy chooses among
     * their targets together. This assumes the callers are spread over the zones like the targets'
     * weights (a balancer cannot see its fleet; deployments size each zone for its callers); under
     * that assumption every live target ends up with the same load. A loss spills at the rebuild
     * that sees it; a recovery brings calls back by at most 10% of them per second, after a second
     * of calm, so a target just back from ejection is not flooded. {@link Strategy#keyAffinity()} and
     * {@link Strategy#consistentHash()} keep a key's home in the local zone (its own table or ring
     * over the local targets) and decide which keys spill by the key's hash, so a key stays on one
     * side. Below the {@linkplain #panicThreshold panic threshold} overall, picks go to every target
     * with no zone preference. {@link Strategy#concurrencyLimited} does not split: it prefers the
     * local zone, then the lowest {@link Target#roundTripNanos()}, under its soft limit, and spills
     * when the local targets reach it. Everything is decided when the snapshot is rebuilt; a pick
     * adds one random draw at most, and none while every call stays local.
     *
     * @param zone a zone name, or {@code ""} for none
     */
    public Builder localZone(String zone) {
      requireUnset("localZone", this.localZone);
      requireArgument(zone != null, "localZone", null, "a zone name, or \"\" for none");
      this.localZone = zone;
      return this;
    }

    /** Where the balancer's meters go. Default: none (and no metric work at all). */
    public Builder meterRegistry(MeterRegistry registry) {
      requireUnset("meterRegistry", this.registry);
      requireArgument(registry != null, "meterRegistry", null, "a MeterRegistry");
      this.registry = registry;
      return this;
    }

    /**
     * The value of the {@code balancer} tag on this balancer's meters. Default: the service name. A
     * stable name keeps a dashboard's series going across restarts; give each balancer of one service
     * its own name when a process has several. If another open balancer already carries the name in
     * the same registry, this one's meters carry {@code name#2} (the lowest free number), and that is
     * logged once: two balancers never share, or remove each other's, meters.
     */
    public Builder name(String name) {
      requireUnset("name", this.name);
      requireArgument(name != null && !name.isBlank(), "name", name, "a non-blank name");
      this.name = name;
      return this;
    }

    /**
     * How many targets get meters of their own ({@code fairway.inflight}, {@code fairway.ejections}, and
     * lb-okhttp's {@code fairway.requests}, tagged {@code target=<id>}). Targets beyond it count
     * together under {@code target="other"}, so a large or churning fleet cannot grow a registry
     * without bound. The first targets to join take the slots; a target that leaves frees its slot for
     * the next to join. {@code 0} puts every target under {@code "other"}. Default 100; at most 10000.
     */
    public Builder targetMeterLimit(int limit) {
      requireUnset("targetMeterLimit", this.targetMeterLimit);
      requireArgument(limit >= 0 && limit <= 10_000, "targetMeterLimit", limit, "0..10000");
      this.targetMeterLimit = limit;
      return this;
    }

    /**
     * Below this percentage of healthy targets, picks go to all targets (panic mode). 0 turns panic
     * mode off. Default 50.
     */
    public Builder panicThreshold(int percent) {
      requireUnset("panicThreshold", this.panicThreshold);
      requireArgument(percent >= 0 && percent <= 100, "panicThreshold", percent, "0..100");
      this.panicThreshold = percent;
      return this;
    }

    /**
     * Deterministic subsetting: balance over this client's window of the targets instead of all of
     * them ({@link Subset}: how the window is chosen, what it guarantees, and how it meets health,
     * panic mode and zones). Default: none, and then nothing about a balancer changes or costs more.
     * When the subset's coordinate has no position, the balancer runs over every target.
     */
    public Builder subset(Subset subset) {
      requireUnset("subset", this.subset);
      requireArgument(subset != null, "subset", null, "Subset.of(size, coordinate)");
      this.subset = subset;
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

    Strategy strategyOrDefault() {
      return strategy != null ? strategy : Strategy.leastQueueing();
    }

    PassiveHealth passiveHealthOrDefault() {
      return passiveHealth != null ? passiveHealth : PassiveHealth.defaults();
    }

    Duration slowStartOrDefault() {
      return slowStart != null ? slowStart : Duration.ZERO;
    }

    String localZoneOrDefault() {
      return localZone != null ? localZone : "";
    }

    String nameOrDefault() {
      return name != null ? name : service;
    }

    int targetMeterLimitOrDefault() {
      return targetMeterLimit != null ? targetMeterLimit : 100;
    }

    int panicThresholdOrDefault() {
      return panicThreshold != null ? panicThreshold : 50;
    }

    /**
     * A new balancer; the builder is left as it was.
     *
     * @throws IllegalArgumentException naming the field if the configuration is incomplete
     */
    public LoadBalancer build() {
      if (fixedTargets != null) {
        return new LoadBalancer(this, TargetSource.of(fixedTargets), true);
      }
      if (source != null) {
        return new LoadBalancer(this, source, false);
      }
      throw new IllegalArgumentException("targets: not set (expected: targets(TargetSource) or targets(Target...))");
    }
  }
}
