package dev.fairway.lb.dns;

import dev.fairway.lb.Target;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.xbill.DNS.Name;
import org.xbill.DNS.SRVRecord;

/**
 * How SRV records become targets (RFC 2782), as pure functions unit-tested alone.
 *
 * <ul>
 *   <li>Priority: records are grouped by priority, lowest first; the refresh uses the first group that
 *       yields at least one address and ignores the others (they are the fallback when it yields none).
 *   <li>Weight: SRV weight {@code w} becomes target weight {@code w}. A group whose weights are all 0
 *       gets weight 1 throughout (an even split, as the RFC says). When weight-0 records share a group
 *       with positive ones, the positive weights are multiplied by {@code min(100, 1,000,000 / max)}
 *       and the weight-0 records get 1: the RFC's "very small chance" (about 1% of a weight-1 record).
 *   <li>Addresses: a record's weight is split evenly over its host's addresses (at least 1 each), and
 *       the shares that land on one address and port add up, so a host is worth its record whatever
 *       its number of addresses.
 *   <li>A record whose target is {@code .} ("decidedly not available") or whose port is 0 has no target.
 * </ul>
 */
final class SrvTargets {
  /** The metadata keys every DNS target carries. */
  static final String NAME = "dns.name";
  static final String PRIORITY = "dns.priority";
  static final String WEIGHT = "dns.weight";

  private static final int MIXED_ZERO_SCALE = 100;

  private SrvTargets() {}

  /** The usable records grouped by priority, lowest first, each group in the reply's order. */
  static List<List<SRVRecord>> groups(List<SRVRecord> records) {
    TreeMap<Integer, List<SRVRecord>> groups = new TreeMap<>();
    for (SRVRecord r : records) {
      if (usable(r)) {
        groups.computeIfAbsent(r.getPriority(), p -> new ArrayList<>()).add(r);
      }
    }
    return List.copyOf(groups.values());
  }

  /** False for a {@code .} target ("decidedly not available", RFC 2782) and for port 0. */
  static boolean usable(SRVRecord r) {
    return !r.getTarget().equals(Name.root) && r.getPort() > 0;
  }

  /**
   * The group's targets: one per address of each record's host (hosts missing from
   * {@code addresses}, or with none, give nothing), with the weights described above.
   */
  static List<Target> targets(List<SRVRecord> group, Map<Name, List<InetAddress>> addresses) {
    int scale = scale(group);
    Map<String, Target> byId = new LinkedHashMap<>();
    for (SRVRecord r : group) {
      List<InetAddress> hostAddresses = addresses.getOrDefault(r.getTarget(), List.of());
      if (hostAddresses.isEmpty()) {
        continue;
      }
      int share = Math.max(1, weight(r.getWeight(), scale) / hostAddresses.size());
      for (InetAddress a : hostAddresses) {
        Target t = Target.of(literal(a), r.getPort()).withMetadata(Map.of(
            NAME, hostName(r.getTarget()),
            PRIORITY, Integer.toString(r.getPriority()),
            WEIGHT, Integer.toString(r.getWeight())));
        Target seen = byId.get(t.id());
        int weight = seen == null ? share : (int) Math.min(Target.MAX_WEIGHT, (long) seen.weight() + share);
        byId.put(t.id(), (seen == null ? t : seen).withWeight(weight));
      }
    }
    return List.copyOf(byId.values());
  }

  /**
   * 0 when every weight of the group is 0 (all get 1); 1 when none is 0; otherwise the factor for the
   * positive weights, so that weight-0 records, given 1, keep a small chance.
   */
  static int scale(List<SRVRecord> group) {
    int max = 0;
    boolean zero = false;
    for (SRVRecord r : group) {
      max = Math.max(max, r.getWeight());
      zero |= r.getWeight() == 0;
    }
    if (max == 0) {
      return 0;
    }
    return zero ? Math.max(1, Math.min(MIXED_ZERO_SCALE, Target.MAX_WEIGHT / max)) : 1;
  }

  /** The target weight of an SRV weight under {@link #scale}; SRV weights (at most 65535) always fit. */
  static int weight(int srvWeight, int scale) {
    if (scale == 0 || srvWeight == 0) {
      return 1;
    }
    return Math.min(Target.MAX_WEIGHT, srvWeight * scale);
  }

  /** The targets of A/AAAA records: each address on {@code port}, weight 1. */
  static List<Target> addressTargets(Name name, List<InetAddress> addresses, int port) {
    Map<String, Target> byId = new LinkedHashMap<>();
    for (InetAddress a : addresses) {
      Target t = Target.of(literal(a), port).withMetadata(Map.of(NAME, hostName(name)));
      byId.putIfAbsent(t.id(), t);
    }
    return List.copyOf(byId.values());
  }

  /** The name without the root's trailing dot, as people write host names. */
  static String hostName(Name name) {
    return name.toString(true);
  }

  /** An address as a literal: dotted quad, or IPv6 in its shortest form (RFC 5952), without a scope. */
  static String literal(InetAddress address) {
    if (!(address instanceof Inet6Address)) {
      return address.getHostAddress();
    }
    byte[] b = address.getAddress();
    int[] groups = new int[8];
    for (int i = 0; i < 8; i++) {
      groups[i] = ((b[2 * i] & 0xff) << 8) | (b[2 * i + 1] & 0xff);
    }
    int bestStart = -1;
    int bestLength = 0;
    for (int i = 0; i < 8; ) {
      if (groups[i] != 0) {
        i++;
        continue;
      }
      int start = i;
      while (i < 8 && groups[i] == 0) {
        i++;
      }
      if (i - start > bestLength) {
        bestStart = start;
        bestLength = i - start;
      }
    }
    if (bestLength < 2) {
      bestStart = -1; // RFC 5952 4.2.2: "::" never stands for a single 0 group
    }
    StringBuilder s = new StringBuilder();
    for (int i = 0; i < 8; i++) {
      if (i == bestStart) {
        s.append("::");
        i += bestLength - 1;
        continue;
      }
      if (s.length() > 0 && s.charAt(s.length() - 1) != ':') {
        s.append(':');
      }
      s.append(Integer.toHexString(groups[i]));
    }
    return s.toString();
  }
}
