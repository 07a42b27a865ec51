package dev.fairway.lb.consul;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fairway.lb.Target;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Turns one reply of {@code /v1/health/service/<name>} (the parsed JSON array) into targets, entry by
 * entry: one entry that cannot be read never costs the others.
 *
 * <ul>
 *   <li>Only the fields a target needs are read ({@code Node.Node}, {@code Node.Address},
 *       {@code Service.ID/Address/Port/Tags/Meta/Weights}, {@code Checks[].Status}); anything else,
 *       such as {@code Node.TaggedAddresses} with or without {@code wan}, is ignored.
 *   <li>Health: an entry counts as its worst check, node checks included (maintenance shows as a
 *       critical {@code _node_maintenance} / {@code _service_maintenance:<id>} check; an unknown
 *       status counts as critical; no checks at all counts as passing). Passing entries get
 *       {@code Weights.Passing}, warning ones {@code Weights.Warning}; critical ones stay in the list as
 *       {@linkplain Target#healthy() unhealthy} targets with {@code Weights.Passing}, so that the
 *       balancer's panic mode can still use them. In passing-only mode warning and critical entries are
 *       dropped. No {@code Weights} means 1 and 1.
 *   <li>Id: {@code Service.ID@Node.Node}, from the first sight. Consul makes service ids unique per node
 *       only, so the node is always part of the id; the id of one instance never changes when another
 *       node registers the same service id.
 *   <li>Address: {@code Service.Address}, else {@code Node.Address}. Port: {@code Service.Port}.
 *   <li>Zone: {@code Service.Meta[zoneKey]}, else {@code ""}. Metadata: {@code Service.Meta}, plus
 *       {@code tags} = the service tags joined with commas when there are any.
 *   <li>Skipped, with a reason: no address ({@code no_address}), an address {@link Target#of} refuses
 *       ({@code bad_address}), a port outside 1..65535 or not a number ({@code bad_port}), a weight of 0
 *       ({@code zero_weight}: the operator asked for no traffic), a negative weight, one above
 *       {@link Target#MAX_WEIGHT} or not a number ({@code bad_weight}), an entry that is not an object
 *       or lacks a Service, a Node or their names ({@code incomplete}), a repeated entry
 *       ({@code duplicate}).
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

  /**
   * The outcome of one reply: {@code critical} counts the unhealthy targets (or, passing-only, the dropped
   * ones); {@code nodes} maps each target's id to its {@code Node.Node}, where closeness is measured from.
   */
  record Mapped(List<Target> targets, List<Skip> skipped, int critical, int warning, Map<String, String> nodes) {}

  /** Maps a JSON array; the caller has checked that {@code entries} is one. */
  Mapped map(JsonNode entries) {
    List<Skip> skipped = new ArrayList<>();
    List<Target> targets = new ArrayList<>(entries.size());
    Set<String> ids = new HashSet<>();
    Map<String, String> nodes = new HashMap<>();
    int critical = 0;
    int warning = 0;
    for (int i = 0; i < entries.size(); i++) {
      JsonNode e = entries.get(i);
      JsonNode s = e.path("Service");
      JsonNode n = e.path("Node");
      String node = text(n.path("Node"));
      String serviceId = text(s.path("ID"));
      if (!e.isObject() || !s.isObject() || !n.isObject() || node.isEmpty() || serviceId.isEmpty()) {
        skipped.add(new Skip("#" + i, "incomplete", "entry " + i + " lacks Service.ID or Node.Node"));
        continue;
      }
      String id = serviceId + "@" + node;
      int status = worstStatus(e.path("Checks"));
      if (status != PASSING && passingOnly) {
        critical += status == CRITICAL ? 1 : 0;
        continue;
      }
      Skip skip = null;
      String host = text(s.path("Address"));
      if (host.isEmpty()) {
        host = text(n.path("Address"));
      }
      JsonNode portNode = s.path("Port");
      int port = portNode.canConvertToInt() && portNode.isIntegralNumber() ? portNode.intValue() : 0;
      long weight = weight(s.path("Weights"), status);
      if (host.isEmpty()) {
        skip = new Skip(id, "no_address", "neither Service.Address nor Node.Address is set");
      } else if (port < 1 || port > 65_535) {
        skip = new Skip(id, "bad_port", "port " + portNode + " (expected: 1..65535)");
      } else if (weight == 0) {
        skip = new Skip(id, "zero_weight", "weight 0 in state " + (status == WARNING ? "warning" : "passing"));
      } else if (weight < 0 || weight > Target.MAX_WEIGHT) {
        skip = new Skip(id, "bad_weight", "weight " + s.path("Weights") + " (expected: 0.." + Target.MAX_WEIGHT + ")");
      } else if (ids.contains(id)) {
        skip = new Skip(id + "#duplicate", "duplicate", "id " + id + " appears more than once");
      }
      if (skip != null) {
        skipped.add(skip);
        continue;
      }
      Target t;
      try {
        t = Target.of(host, port);
      } catch (IllegalArgumentException ex) {
        skipped.add(new Skip(id, "bad_address", String.valueOf(ex.getMessage()))); // Target.of always says why
        continue;
      }
      ids.add(id);
      nodes.put(id, node);
      if (status == WARNING) {
        warning++;
      } else if (status == CRITICAL) {
        critical++;
      }
      Map<String, String> meta = strings(s.path("Meta"));
      targets.add(t.withId(id).withWeight((int) weight).withZone(meta.getOrDefault(zoneKey, ""))
          .withMetadata(metadata(meta, s.path("Tags"))).withHealthy(status != CRITICAL));
    }
    targets.sort(Comparator.comparing(Target::id));
    return new Mapped(List.copyOf(targets), List.copyOf(skipped), critical, warning, Map.copyOf(nodes));
  }

  private static Map<String, String> strings(JsonNode object) {
    if (!object.isObject()) {
      return Map.of();
    }
    Map<String, String> m = new LinkedHashMap<>();
    for (Map.Entry<String, JsonNode> f : object.properties()) {
      if (f.getValue().isValueNode() && !f.getValue().isNull()) {
        m.put(f.getKey(), f.getValue().asText());
      }
    }
    return m;
  }

  private static Map<String, String> metadata(Map<String, String> meta, JsonNode tags) {
    List<String> t = new ArrayList<>();
    for (JsonNode tag : tags) {
      if (tag.isTextual()) {
        t.add(tag.textValue());
      }
    }
    if (t.isEmpty()) {
      return meta;
    }
    Map<String, String> m = new LinkedHashMap<>(meta);
    m.put(TAGS_KEY, String.join(",", t));
    return m;
  }

  /** 1 without {@code Weights}; -1 for a value that is not a whole number (so it is skipped as bad). */
  private static long weight(JsonNode weights, int status) {
    if (weights.isMissingNode() || weights.isNull()) {
      return 1;
    }
    JsonNode w = weights.path(status == WARNING ? "Warning" : "Passing");
    if (w.isMissingNode() || w.isNull()) {
      return 1;
    }
    return w.isIntegralNumber() && w.canConvertToLong() ? w.longValue() : -1;
  }

  static int worstStatus(JsonNode checks) {
    int worst = PASSING;
    for (JsonNode c : checks) {
      int s = statusOf(c.path("Status"));
      if (s > worst) {
        worst = s;
      }
    }
    return worst;
  }

  private static int statusOf(JsonNode status) {
    return switch (text(status).toLowerCase(Locale.ROOT)) {
      case "passing" -> PASSING;
      case "warning" -> WARNING;
      default -> CRITICAL; // "critical", "maintenance", missing, anything unknown: not healthy
    };
  }

  private static String text(JsonNode n) {
    return n.isTextual() ? n.textValue().trim() : "";
  }
}
