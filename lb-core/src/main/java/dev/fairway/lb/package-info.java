/**
 * Client-side load balancing: a {@link dev.fairway.lb.LoadBalancer} per service chooses a
 * {@link dev.fairway.lb.Target} for each call by a {@link dev.fairway.lb.Strategy}, from the list a
 * {@link dev.fairway.lb.TargetSource} delivers, and keeps targets that fail out of rotation
 * ({@link dev.fairway.lb.PassiveHealth}, {@link dev.fairway.lb.ActiveHealth}).
 *
 * <p>Nullness: every type in this package is {@link org.jspecify.annotations.NullMarked}: a
 * parameter, return value or field is never null unless it is annotated
 * {@link org.jspecify.annotations.Nullable}. A builder or factory given null where null is not
 * allowed throws {@link IllegalArgumentException} naming the field.
 *
 * <p>Public API: the public types of this package. Every package-private class here is an
 * implementation detail and may change.
 *
 * <h2>How it works inside</h2>
 *
 * <p>A map of the package-private engine, for whoever changes it. The package is flat on purpose
 * (as Caffeine's is): the sealed {@code Strategy} needs its permitted classes beside it, and Java
 * has no access between packages short of public. So the layers below are a reading order and a
 * dependency rule, not packages: a class uses only the layers listed before its own, and the few
 * exceptions are named at the end.
 *
 * <ol>
 *   <li><b>Values.</b> The public value types and configuration ({@code Target}, {@code Strategy},
 *       {@code PassiveHealth}, {@code ActiveHealth}, {@code TargetState}, {@code TargetStatus}) and
 *       small internal tools: {@code RandomSource}, {@code Murmur3}, {@code WeightedSampler},
 *       {@code PaddedCounter}, {@code SlowStart} (effective weight during a warm-up),
 *       {@code BalancerContext} (what a strategy may know of its balancer).
 *   <li><b>Per-target load</b>, one signal per unit. {@code TargetLoad}: the per-target record,
 *       everything measured and heard about one target's load (in flight, peak-EWMA latency,
 *       windowed minimum, the load report and its lifetime, learned concurrency, and what the rules
 *       below keep); it stores, it does not judge. Two rules write it, each in its own unit:
 *       {@code LearnedConcurrency} (how many calls the target serves at once, learned from our own
 *       calls) and {@code ReportJudge} (how far a report is believed: the target's trust and the
 *       fleet's scale, by Little's law on our own traffic). One unit reads it for the pick:
 *       {@code FleetLoad}, the fleet-load reader (the calls at a target from every client; the same
 *       as far as trusted, which least connections and power of two choices compare; and the worker
 *       state, {@code FREE}, {@code BUSY} or {@code UNKNOWN}, from our own calls, which least queueing
 *       and the hedge's free-worker pick share; the hedge also believes a report of every worker
 *       busy). {@code TrackedTarget} extends the record
 *       with the target's health and outcome window: one instance per target id, kept across
 *       rebuilds.
 *   <li><b>Health.</b> {@code TargetHealth}: one target's state machine, one immutable
 *       {@code TargetHealth.State} in one volatile field, one transition function ({@code next}), and
 *       the one mapping from its {@code HealthPhase} to the public {@code TargetState}
 *       ({@code TargetHealth.shown}) that status, metrics and listeners all use. A change returns a
 *       {@code HealthTransition}; {@code HealthEpoch} counts the changes to out of service, so a
 *       pick can tell with one read whether its snapshot may be missing one.
 *       {@code PassiveHealthChecker} decides ejections from call outcomes (a Resilience4j window
 *       per target); {@code ActiveHealthChecker} runs the probes.
 *   <li><b>Membership and snapshots.</b> {@code Membership}: the members by id, applied from a new
 *       list whole or not at all. {@code SnapshotBuilder} turns it, at a moment, into a
 *       {@code TargetSnapshot}: plain data (pickable targets, effective weights, who is on trial,
 *       panic, the next review time) that knows nothing of strategies; with a {@code Subset} and a
 *       known {@code PeerPosition} its members are this client's window ({@code SubsetWindow}: the
 *       ring order and the arc, exact in whole units), widened for targets out of service, and the
 *       full list stays in {@code TargetSnapshot.known}. {@code BalancerUpdater}
 *       applies every change one at a time and collapsed (Finagle's {@code Updater}) and publishes a
 *       {@code PublishedSnapshot}: the snapshot and its selector in one immutable object, one
 *       volatile write.
 *   <li><b>Strategies</b>, in three lifetimes, one word each: a {@code Strategy} (its sealed base
 *       {@code BuiltinStrategy}) describes; {@code BuiltinStrategy.attach} makes an
 *       {@code AttachedStrategy} per balancer, holding the state that outlives a snapshot (cursor,
 *       {@code AffinityTable}, hash ring, wait queue); for each snapshot it builds a {@code Selector},
 *       which chooses, lock-free and allocation-free, for that snapshot alone (gRPC's
 *       {@code SubchannelPicker}). {@code ZoneRouting} alone owns zone-aware routing: it wraps any
 *       strategy that does not rank by zone itself ({@code BuiltinStrategy.attachTo}), computes the
 *       {@code ZoneSplit} from the snapshot and its own previous selector, and its selector tells the
 *       balancer when to review the split and the metrics what share stays local. Strategies read
 *       load only through {@code FleetLoad} and the record's own fields.
 *   <li><b>Metrics.</b> {@code BalancerMetrics}: a no-op by default; the Micrometer one reads the
 *       published snapshot and selector, so gauges cost the pick path nothing.
 *   <li><b>Facade.</b> {@code LoadBalancer} wires it all and runs the pick; {@code PickHandle} is a
 *       call's hold on a target; {@code Completions} is what a completion does.
 * </ol>
 *
 * <p><b>The pick</b> ({@code LoadBalancer.pick}): read {@code BalancerUpdater.published()} once;
 * if its review time has passed, {@code BalancerUpdater.refresh()} applies the due changes (never
 * waiting). {@code Selector.select} chooses; null means nothing to give, and then
 * {@code AttachedStrategy.awaitSlot} waits for a slot (concurrency-limited only) or the pick fails
 * with {@code NoTargetAvailableException}. The chosen target's slot is taken
 * ({@code TargetLoad.acquire}); a target that went out since the snapshot was built (asked of
 * {@code TargetHealth.outAt} only when the {@code HealthEpoch} moved), or a half-open one without a
 * free trial permit, is given back and the choice made again without it. The result is a
 * {@code PickHandle}: the one allocation.
 *
 * <p><b>A load report</b> ({@code PickHandle.reportLoad}, before the completion): {@code
 * Completions.report} has the target keep it ({@code TargetLoad.recordReport}) and the {@code
 * ReportJudge} weigh it (the target's trust and the fleet's scale), and counts one that claims fewer
 * calls than ours there ({@code BalancerMetrics.reportImplausible}); least connections and power of
 * two choices read it through {@code FleetLoad.load}.
 *
 * <p><b>A completion</b> ({@code PickHandle.success}, {@code failure} or {@code release}; only the
 * first counts): {@code Completions} updates the {@code TargetLoad} (latency average, windowed
 * minimum),
 * runs the learned-concurrency rule ({@code LearnedConcurrency.record}, for every strategy: least
 * queueing and the hedge's free-worker pick read it), frees the slot, feeds
 * {@code PassiveHealthChecker} (which may eject: {@code TargetHealth.apply}, then
 * {@code BalancerUpdater.offerTransition}, never waiting), drops the target's affinity entries on a
 * failure, and tells the strategy the slot is free ({@code AttachedStrategy.onRelease}).
 *
 * <p><b>A rebuild</b>: a new list ({@code offerTargets}), a health transition
 * ({@code offerTransition}: ejections, probes through {@code LoadBalancer.onProbe}) or a due review
 * ({@code refresh}) makes the caller the applier unless another thread is one. The applier applies
 * the latest list ({@code Membership.next}, then {@code commit}), the due time-derived transitions,
 * and the queued ones; {@code SnapshotBuilder.build} makes the {@code TargetSnapshot};
 * {@code PublishedSnapshot.of} asks {@code AttachedStrategy.selectorFor(snapshot, previous)} for its
 * selector (a ring is reused while membership stands; {@code ZoneRouting} splits and asks each
 * side's attachment); one compare-and-set publishes both; then meters, log lines and listeners
 * hear of the change, outside any lock, in order.
 *
 * <p><b>Dependencies that still point up</b>, each on purpose: {@code TrackedTarget} carries the
 * consistent-hash ring's per-member bookkeeping (a field read per point keeps the incremental
 * rebuild of a 10,000-target ring a single pass; a map would cost a lookup per point) and the
 * affinity epoch (a failure invalidates all of a target's keys with one atomic increment on the
 * completion path, without scanning the {@code AffinityTable}); {@code BalancerContext} holds least queueing's
 * {@code OtherClients}, because zone routing attaches a strategy three times and they must share
 * one verdict; {@code PassiveHealthChecker} and the probes push transitions to the
 * {@code BalancerUpdater}, and the updater calls the strategy and the metrics: the serialised
 * updater is the one place that orders changes, so health offers to it rather than rebuilding
 * itself; and the engine logs under {@code LoadBalancer}'s name, so a user configures one logger.
 */
@NullMarked
package dev.fairway.lb;

import org.jspecify.annotations.NullMarked;
