/**
 * DNS discovery for Fairway: {@link dev.fairway.lb.dns.DnsTargetSource} turns SRV records, or the A
 * and AAAA records of a name with a fixed port, into a live list of {@link dev.fairway.lb.Target}s,
 * asked again as often as the records' TTLs say.
 *
 * <p>Only {@code DnsTargetSource} and its builder are public API. Every other type in this package is
 * package-private engine and may change in any release.
 *
 * <h2>A map of the package</h2>
 *
 * <ul>
 *   <li>Wiring: {@code DnsTargetSource} (the builder's options, the thread, the parts below).
 *   <li>Transport: {@code DnsClient} (one question, the whole reply; dnsjava's resolver behind it) and
 *       {@code Scheduler} (the source's one thread, or a manual clock in tests).
 *   <li>Reading: {@code Lookup} (one reply: records, absent, alias, failed) and {@code SrvTargets}
 *       (RFC 2782's priorities and weights as targets), both pure.
 *   <li>One refresh: {@code Resolution} asks the questions (SRV, then hosts' A/AAAA; or A/AAAA), each
 *       with a timeout on the scheduler, and yields an {@code Outcome}.
 *   <li>The cycle: {@code RefreshLoop} (when to ask again: TTL within bounds, or the retry after a
 *       failure); from lb-core's {@code dev.fairway.lb.internal}, shared with the other discovery
 *       modules: {@code TargetListPublisher} (compares and notifies) and {@code DiscoveryMetrics} (the
 *       {@code fairway.discovery.*} meters, a no-op without a registry).
 * </ul>
 *
 * <p>A refresh flows: {@code RefreshLoop} asks {@code Resolution} on the source's thread; every reply
 * hops back onto that thread; {@code Lookup} reads it; {@code SrvTargets} maps it; the
 * {@code Outcome} goes to {@code TargetListPublisher} (a real answer) or keeps the last list (a failure);
 * {@code RefreshLoop} schedules the next refresh.
 *
 * <p>Nullness: {@link org.jspecify.annotations.NullMarked}, as {@code dev.fairway.lb}: nothing is null
 * unless annotated {@link org.jspecify.annotations.Nullable}.
 */
@NullMarked
package dev.fairway.lb.dns;

import org.jspecify.annotations.NullMarked;
