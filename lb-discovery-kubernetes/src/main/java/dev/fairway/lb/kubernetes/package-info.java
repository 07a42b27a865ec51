/**
 * Kubernetes discovery for Fairway: {@link dev.fairway.lb.kubernetes.KubernetesTargetSource} turns a
 * Service's EndpointSlices ({@code discovery.k8s.io/v1}) into a live list of
 * {@link dev.fairway.lb.Target}s, with the endpoints' conditions, zones and topology hints.
 *
 * <p>Only {@code KubernetesTargetSource}, its builder and {@code KubernetesApiException} are public API.
 * Every other type in this package is package-private engine and may change in any release.
 *
 * <h2>A map of the package</h2>
 *
 * <ul>
 *   <li>Wiring: {@code KubernetesTargetSource} (one Service: connection, threads, watch, publisher).
 *   <li>Where the API server is: {@code ClusterConnection} (URL, CA, token re-read per request,
 *       namespace; the in-cluster configuration), {@code Kubeconfig} (the same from a kubeconfig, with
 *       the optional SnakeYAML).
 *   <li>Transport: {@code ApiHttp} (a GET and a streaming GET), {@code JdkApiHttp} (the JDK client).
 *   <li>The loop: {@code SliceWatch} (list, then watch from the resourceVersion; bookmarks, 410, stalls,
 *       errors with {@code Backoff}) keeps the Service's slices by name.
 *   <li>The decision, pure: {@code SliceParser} reads one slice ({@code Slice}, entry by entry, with a
 *       {@code Skip} for what it cannot use); {@code EndpointMerge} turns all slices into targets (ports
 *       by {@code PortChoice}, once per address and per Pod, conditions, hints).
 *   <li>Out, shared with the other discovery modules in lb-core's {@code dev.fairway.lb.internal}:
 *       {@code TargetListPublisher} (compare, notify, {@code whenReady}), {@code DiscoveryMetrics} (the
 *       {@code fairway.discovery.*} meters, a no-op without a registry).
 * </ul>
 *
 * <p>A change flows: a watch line hops onto the loop thread; {@code SliceWatch} parses the slice with
 * {@code SliceParser} and stores it; {@code EndpointMerge} merges all slices; {@code TargetListPublisher}
 * publishes the list if it differs, and the balancer rebuilds its snapshot.
 *
 * <p>Nullness: {@link org.jspecify.annotations.NullMarked}: nothing is null unless annotated
 * {@link org.jspecify.annotations.Nullable}.
 */
@NullMarked
package dev.fairway.lb.kubernetes;

import org.jspecify.annotations.NullMarked;
