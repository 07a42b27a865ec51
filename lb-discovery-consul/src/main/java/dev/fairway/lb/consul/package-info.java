/**
 * Consul discovery for Fairway: {@link dev.fairway.lb.consul.ConsulTargetSource} turns a service's
 * entries in Consul's health API into a live list of {@link dev.fairway.lb.Target}s, and
 * {@link dev.fairway.lb.consul.ConsulDiscovery} shares one agent connection (one HTTP client, a few
 * threads) among the sources of many services.
 *
 * {@link dev.fairway.lb.consul.ConsulPeerCoordinate} is this client's live place among its own
 * service's passing instances, for deterministic subsetting.
 *
 * <p>Only {@code ConsulTargetSource}, {@code ConsulDiscovery}, their builders and
 * {@code ConsulPeerCoordinate} are public API. Every other type in this package is package-private
 * engine and may change in any release.
 *
 * <h2>A map of the package</h2>
 *
 * <ul>
 *   <li>Wiring: {@code ConsulDiscovery} (one agent: settings, threads, HTTP, the shared coordinate
 *       watch) and {@code ConsulTargetSource} (one service: query, watch, publisher).
 *   <li>Agent settings: {@code AgentSettings} (builder options over the environment, read at build)
 *       gives an immutable {@code AgentConfig}; TLS from it: {@code ConsulTls} (the SSL context),
 *       {@code PemFiles} (BouncyCastle's PEM parser), {@code NameCheckingTrustManager} and
 *       {@code RenamedEngine} (the JDK's name checks against a configured server name), on
 *       {@code ForwardingSSLEngine}, which also carries the server name as SNI.
 *   <li>Transport and threads: {@code ConsulHttp} (one async GET), {@code JdkConsulHttp} (the JDK
 *       client), {@code DiscoveryThreads} (the loop thread and the HTTP workers).
 *   <li>The health watch, one read at a time: {@code HealthQuery} (what is asked) is sent by
 *       {@code HealthWatch} (the steps: send, read the reply, decide) on {@code WatchSteps} (one request
 *       in flight, one step waiting, nothing escapes); {@code HealthMapper} turns a reply into targets;
 *       {@code WakeupLimiter} (with {@code TokenBucket}) says when to ask next, {@code Backoff} after an
 *       error; {@code TargetPublisher} merges round-trip times and hands the list to lb-core's
 *       shared {@code TargetListPublisher}, which compares and notifies.
 *   <li>Peer positions: {@code ConsulPeerCoordinate} reads a passing-only {@code ConsulTargetSource} of
 *       its own service, one per service and discovery, shared by its coordinates.
 *   <li>Closeness: {@code CoordinateWatch} (one per discovery), {@code AgentSelf},
 *       {@code NetworkCoordinates} / {@code NetworkCoordinate} (Serf's formula).
 *   <li>{@code DiscoveryMetrics} (lb-core's {@code dev.fairway.lb.internal}, shared with the other
 *       discovery modules): the {@code fairway.discovery.*} meters, a no-op without a registry.
 * </ul>
 *
 * <p>A read flows: a step of {@code HealthWatch} sends {@code HealthQuery.pathAndQuery}; the reply
 * hops back onto the loop thread; {@code HealthMapper} maps it; {@code TargetPublisher} publishes it if
 * it differs; {@code WakeupLimiter} decides whether the next query goes out at once or waits.
 *
 * <p>Nullness: {@link org.jspecify.annotations.NullMarked}, as {@code dev.fairway.lb}: nothing is null
 * unless annotated {@link org.jspecify.annotations.Nullable}.
 */
@NullMarked
package dev.fairway.lb.consul;

import org.jspecify.annotations.NullMarked;
