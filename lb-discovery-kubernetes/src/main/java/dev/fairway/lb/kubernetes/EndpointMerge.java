package dev.fairway.lb.kubernetes;

import dev.fairway.lb.Target;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A Service's slices into one target list: the decision of this package, as one pure function of the
 * slices and the configuration, unit-tested alone.
 *
 * <ol>
 *   <li><b>Ports.</b> Each slice's port comes from {@link PortChoice#resolve}; a slice without a fitting
 *       port is skipped ({@code no_port}) with the ports it has.
 *   <li><b>Once per address.</b> An address and port in two slices (the controller moves endpoints
 *       between slices) count once: the better conditions win (ready, then serving and terminating),
 *       then the first slice by name.
 *   <li><b>Once per Pod across families.</b> In a dual-stack Service, a Pod is in an IPv4 and an IPv6
 *       slice; it counts once, in the preferred family ({@code preferIpv6}, default IPv4), so a
 *       dual-stack Pod does not take twice the share of a single-stack one.
 *   <li><b>Conditions, as kube-proxy.</b> Ready endpoints take calls. Only when none is ready do the
 *       endpoints that are serving and terminating take them (a fallback during a full rollout); the
 *       others are left out, not as bad input but as not serving.
 *   <li><b>Zones and hints.</b> Each target's zone is its endpoint's {@code zone}. When the local zone
 *       is known, every endpoint that takes calls carries {@code hints.forZones} and at least one is
 *       hinted for the local zone (kube-proxy's rule), the hints replace the zones: a target hinted for
 *       the local zone gets the local zone, any other the first zone it is hinted for. Fairway's zone
 *       routing then keeps calls on the controller's allocation and still spills when the local side is
 *       unhealthy. The endpoint's own zone stays in the metadata ({@code zone}).
 *   <li><b>Weights.</b> All 1: EndpointSlices carry none.
 * </ol>
 */
final class EndpointMerge {
  /** The result: targets sorted by id, what was skipped, and which rules applied. */
  record Merged(List<Target> targets, List<Skip> skips, boolean hintsUsed, boolean terminatingFallback) {}

  private record Candidate(Slice slice, Slice.Endpoint endpoint, int port) {
    int rank() {
      return endpoint.ready() ? 2 : endpoint.serving() && endpoint.terminating() ? 1 : 0;
    }

    String key() {
      return (endpoint.address().indexOf(':') >= 0 ? "[" + endpoint.address() + "]" : endpoint.address()) + ":"
          + port;
    }
  }

  private EndpointMerge() {}

  static Merged merge(Collection<Slice> slices, PortChoice portChoice, String localZone, boolean preferIpv6) {
    List<Skip> skips = new ArrayList<>();
    List<Slice> ordered = new ArrayList<>(slices);
    ordered.sort(Comparator.comparing(Slice::name));
    Map<String, Candidate> byAddress = new LinkedHashMap<>();
    for (Slice slice : ordered) {
      int port = portChoice.resolve(slice);
      if (port < 0) {
        skips.add(new Skip(slice.name(), "no_port", "no port fits " + portChoice + "; the slice has "
            + slice.ports()));
        continue;
      }
      for (Slice.Endpoint e : slice.endpoints()) {
        Candidate c = new Candidate(slice, e, port);
        Candidate seen = byAddress.get(c.key());
        if (seen == null || c.rank() > seen.rank()) {
          byAddress.put(c.key(), c);
        }
      }
    }
    List<Candidate> candidates = oncePerPod(byAddress.values(), preferIpv6);
    List<Candidate> ready = new ArrayList<>();
    List<Candidate> fallback = new ArrayList<>();
    for (Candidate c : candidates) {
      if (c.endpoint.ready()) {
        ready.add(c);
      } else if (c.endpoint.serving() && c.endpoint.terminating()) {
        fallback.add(c);
      }
    }
    boolean useFallback = ready.isEmpty() && !fallback.isEmpty();
    List<Candidate> chosen = useFallback ? fallback : ready;
    boolean hints = hintsApply(chosen, localZone);
    List<Target> targets = new ArrayList<>(chosen.size());
    for (Candidate c : chosen) {
      targets.add(target(c, hints, localZone, useFallback));
    }
    targets.sort(Comparator.comparing(Target::id));
    return new Merged(List.copyOf(targets), List.copyOf(skips), hints, useFallback);
  }

  /** Drops the non-preferred family's entry of every Pod seen in both (matched by the Pod's uid). */
  private static List<Candidate> oncePerPod(Collection<Candidate> candidates, boolean preferIpv6) {
    Slice.AddressType preferred = preferIpv6 ? Slice.AddressType.IPV6 : Slice.AddressType.IPV4;
    Map<String, Slice.AddressType> familiesWithPreferred = new HashMap<>();
    for (Candidate c : candidates) {
      if (!c.endpoint.podUid().isEmpty() && c.slice.addressType() == preferred) {
        familiesWithPreferred.put(c.endpoint.podUid(), preferred);
      }
    }
    List<Candidate> out = new ArrayList<>(candidates.size());
    for (Candidate c : candidates) {
      boolean other = c.slice.addressType() != preferred;
      if (other && !c.endpoint.podUid().isEmpty() && familiesWithPreferred.containsKey(c.endpoint.podUid())) {
        continue;
      }
      out.add(c);
    }
    return out;
  }

  /** kube-proxy's rule: hints count only if all carry them and some are for the local zone. */
  private static boolean hintsApply(List<Candidate> chosen, String localZone) {
    if (localZone.isEmpty() || chosen.isEmpty()) {
      return false;
    }
    boolean local = false;
    for (Candidate c : chosen) {
      if (c.endpoint.forZones().isEmpty()) {
        return false;
      }
      local |= c.endpoint.forZones().contains(localZone);
    }
    return local;
  }

  private static Target target(Candidate c, boolean hints, String localZone, boolean fallback) {
    Slice.Endpoint e = c.endpoint;
    String zone = e.zone();
    if (hints) {
      zone = e.forZones().contains(localZone) ? localZone : e.forZones().get(0);
    }
    Map<String, String> metadata = new LinkedHashMap<>();
    putIfSet(metadata, "zone", e.zone());
    putIfSet(metadata, "node", e.nodeName());
    putIfSet(metadata, "pod", e.podName());
    if (fallback) {
      metadata.put("terminating", "true");
    }
    return Target.of(e.address(), c.port).withZone(zone).withMetadata(metadata);
  }

  private static void putIfSet(Map<String, String> metadata, String key, String value) {
    if (!value.isEmpty()) {
      metadata.put(key, value);
    }
  }
}
