package dev.fairway.lb.consul;

import dev.fairway.lb.Target;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.kiwiproject.consul.model.catalog.ServiceWeights;
import org.kiwiproject.consul.model.health.HealthCheck;
import org.kiwiproject.consul.model.health.Node;
import org.kiwiproject.consul.model.health.Service;
import org.kiwiproject.consul.model.health.ServiceHealth;

/**
 * Turns one reply of {@code /v1/health/service/<name>} into targets.
 *
 * <ul>
 *   <li>Health: an entry counts as its worst check, node checks included (maintenance shows as a
 *       critical {@code _node_maintenance} / {@code _service_maintenance:<id>} check; an unknown
 *       status counts as critical; no checks at all counts as passing). Critical entries are dropped;
 *       warning entries stay with {@code Weights.Warning} (dropped in passing-only mode); passing
 *       entries get {@code Weights.Passing}. No {@code Weights} means 1 and 1.
 *   <li>Id: {@code Service.ID}. Consul only makes service ids unique per node, so when one reply holds
 *       the same id on several nodes, each of them becomes {@code <ID>@<Node>}; an id that is still
 *       not unique after that (a repeated entry) is skipped.
 *   <li>Address: {@code Service.Address}, else {@code Node.Address}. Port: {@code Service.Port}.
 *   <li>Zone: {@code Service.Meta[zoneKey]}, else {@code ""}. Metadata: {@code Service.Meta}, plus
 *       {@code tags} = the service tags joined with commas when there are any.
 *   <li>Skipped, with a reason: no address ({@code no_address}), an address {@link Target#of} refuses
 *       ({@code bad_address}), a port outside 1..65535 ({@code bad_port}), a weight of 0
 *       ({@code zero_weight}: the operator asked for no traffic), a negative weight or one above
 *       {@link Target#MAX_WEIGHT} ({@code bad_weight}), a null entry or one without a Service or Node
 *       ({@code incomplete}), a repeated id ({@code duplicate}).
 * </ul>
 *
 * <p>Targets come back sorted by id, so equal replies give equal lists whatever order Consul used.
 * Stateless and thread-safe.
 */
final class HealthMapper {
  static final String TAGS_KEY = "tags";

  private static final int PASSING = 0;
  private static final int WARNING = 1;
  private static final int CRITICAL = 2;

  private final String zoneKey;
  private final boolean passingOnly;

  HealthMapper(String zoneKey, boolean passingOnly) {
    this.zoneKey = zoneKey;
    this.passingOnly = passingOnly;
  }

  /** An entry that could not become a target; {@code key} identifies it across replies. */
  record Skip(String key, String reason, String detail) {}

  /** The outcome of one reply. */
  record Mapped(List<Target> targets, List<Skip> skipped, int critical, int warning) {}

  Mapped map(List<ServiceHealth> entries) {
    List<Skip> skipped = new ArrayList<>();
    Map<String, Integer> idCounts = new HashMap<>();
    for (ServiceHealth e : entries) {
      if (e != null && e.getService() != null) {
        idCounts.merge(e.getService().getId(), 1, Integer::sum);
      }
    }
    List<Target> targets = new ArrayList<>(entries.size());
    Set<String> ids = new HashSet<>();
    int critical = 0;
    int warning = 0;
    for (int i = 0; i < entries.size(); i++) {
      ServiceHealth e = entries.get(i);
      if (e == null || e.getService() == null || e.getNode() == null) {
        skipped.add(new Skip("#" + i, "incomplete", "entry " + i + " has no Service or Node"));
        continue;
      }
      Service s = e.getService();
      Node n = e.getNode();
      String id = s.getId();
      if (id == null || id.isBlank() || idCounts.getOrDefault(id, 0) > 1) {
        id = (id == null || id.isBlank() ? "" : id) + "@" + n.getNode();
      }
      int status = worstStatus(e.getChecks());
      if (status == CRITICAL || (status == WARNING && passingOnly)) {
        critical += status == CRITICAL ? 1 : 0;
        continue;
      }
      if (status == WARNING) {
        warning++;
      }
      String host = nonBlank(s.getAddress()) ? s.getAddress().trim() : n.getAddress();
      if (!nonBlank(host)) {
        skipped.add(new Skip(id, "no_address", "neither Service.Address nor Node.Address is set"));
        continue;
      }
      int port = s.getPort();
      if (port < 1 || port > 65_535) {
        skipped.add(new Skip(id, "bad_port", "port " + port + " (expected: 1..65535)"));
        continue;
      }
      int weight = weight(s.getWeights(), status);
      if (weight == 0) {
        skipped.add(new Skip(id, "zero_weight", "weight 0 in state " + (status == WARNING ? "warning" : "passing")));
        continue;
      }
      if (weight < 0 || weight > Target.MAX_WEIGHT) {
        skipped.add(new Skip(id, "bad_weight", "weight " + weight + " (expected: 0.." + Target.MAX_WEIGHT + ")"));
        continue;
      }
      if (!ids.add(id)) {
        skipped.add(new Skip(id + "#duplicate", "duplicate", "id " + id + " appears more than once"));
        continue;
      }
      Target t;
      try {
        t = Target.of(host.trim(), port);
      } catch (IllegalArgumentException ex) {
        ids.remove(id);
        skipped.add(new Skip(id, "bad_address", ex.getMessage()));
        continue;
      }
      Map<String, String> meta = s.getMeta() == null ? Map.of() : s.getMeta();
      String zone = meta.getOrDefault(zoneKey, "");
      targets.add(t.withId(id).withWeight(weight).withZone(zone).withMetadata(metadata(meta, s.getTags())));
    }
    targets.sort(Comparator.comparing(Target::id));
    return new Mapped(List.copyOf(targets), List.copyOf(skipped), critical, warning);
  }

  private static Map<String, String> metadata(Map<String, String> meta, List<String> tags) {
    if (tags == null || tags.isEmpty()) {
      return meta;
    }
    Map<String, String> m = new LinkedHashMap<>(meta);
    m.put(TAGS_KEY, String.join(",", tags));
    return m;
  }

  private static int weight(Optional<ServiceWeights> weights, int status) {
    if (weights == null || weights.isEmpty()) {
      return 1;
    }
    return status == WARNING ? weights.get().getWarning() : weights.get().getPassing();
  }

  static int worstStatus(List<HealthCheck> checks) {
    int worst = PASSING;
    if (checks == null) {
      return worst;
    }
    for (HealthCheck c : checks) {
      int s = c == null ? CRITICAL : statusOf(c.getStatus());
      if (s > worst) {
        worst = s;
      }
    }
    return worst;
  }

  private static int statusOf(String status) {
    if (status == null) {
      return CRITICAL;
    }
    switch (status.toLowerCase(Locale.ROOT)) {
      case "passing":
        return PASSING;
      case "warning":
        return WARNING;
      default:
        return CRITICAL; // "critical", "maintenance", anything unknown: do not route there
    }
  }

  private static boolean nonBlank(String s) {
    return s != null && !s.isBlank();
  }
}
