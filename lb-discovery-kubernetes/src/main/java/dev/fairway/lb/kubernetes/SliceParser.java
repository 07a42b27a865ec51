package dev.fairway.lb.kubernetes;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * Reads one EndpointSlice object ({@code discovery.k8s.io/v1}) into a {@link Slice}, entry by entry: an
 * endpoint that cannot be read is left out with a {@link Skip}, and the others stay. A slice that cannot
 * be read at all ({@code FQDN} addresses, an unknown {@code addressType}, no name, {@code endpoints} or
 * {@code ports} that are not arrays) gives no slice and one skip.
 *
 * <p>What it follows (the EndpointSlice v1 reference): {@code addresses} holds 1 to 100 strings, of
 * which only the first has a meaning ("no semantics are defined for additional addresses beyond the
 * first, and kube-proxy does not look at them"); conditions may be absent; a port entry's {@code port}
 * may be absent ("all ports") and its {@code protocol} defaults to TCP. Pure and stateless.
 */
final class SliceParser {
  private static final Pattern IPV4 =
      Pattern.compile("(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)(\\.(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)){3}");
  private static final Pattern IPV6_CHARS = Pattern.compile("[0-9a-fA-F:.]{2,45}");

  private SliceParser() {}

  /** A slice, or null with the reason in {@code skips}; endpoint skips are added to {@code skips} too. */
  static @Nullable Slice parse(JsonNode object, List<Skip> skips) {
    if (!object.isObject()) {
      skips.add(new Skip("?", "malformed_slice", "an EndpointSlice that is not a JSON object"));
      return null;
    }
    String name = object.path("metadata").path("name").asText("");
    if (name.isEmpty() || !object.path("metadata").path("name").isTextual()) {
      skips.add(new Skip("?", "malformed_slice", "an EndpointSlice without metadata.name"));
      return null;
    }
    JsonNode typeNode = object.path("addressType");
    String type = typeNode.isTextual() ? typeNode.asText() : "";
    Slice.AddressType addressType;
    switch (type) {
      case "IPv4" -> addressType = Slice.AddressType.IPV4;
      case "IPv6" -> addressType = Slice.AddressType.IPV6;
      case "FQDN" -> {
        skips.add(new Skip(name, "fqdn", "addressType FQDN (deprecated, never written by the EndpointSlice"
            + " controller; Fairway balances over IP addresses only)"));
        return null;
      }
      default -> {
        skips.add(new Skip(name, "address_type", "unknown addressType " + typeNode));
        return null;
      }
    }
    List<Slice.Port> ports = ports(name, object.path("ports"), skips);
    if (ports == null) {
      return null;
    }
    JsonNode endpointsNode = object.path("endpoints");
    if (!endpointsNode.isArray() && !endpointsNode.isNull() && !endpointsNode.isMissingNode()) {
      skips.add(new Skip(name, "malformed_slice", "endpoints is not an array"));
      return null;
    }
    List<Slice.Endpoint> endpoints = new ArrayList<>();
    int i = 0;
    for (JsonNode e : endpointsNode) {
      Slice.Endpoint endpoint = endpoint(name, i++, e, addressType, skips);
      if (endpoint != null) {
        endpoints.add(endpoint);
      }
    }
    return new Slice(name, addressType, List.copyOf(endpoints), ports);
  }

  /** The slice's ports, or null (with a skip) when they cannot be read. Absent or null: no ports. */
  private static @Nullable List<Slice.Port> ports(String slice, JsonNode node, List<Skip> skips) {
    if (node.isMissingNode() || node.isNull()) {
      return List.of();
    }
    if (!node.isArray()) {
      skips.add(new Skip(slice, "malformed_slice", "ports is not an array"));
      return null;
    }
    List<Slice.Port> ports = new ArrayList<>();
    for (JsonNode p : node) {
      JsonNode number = p.path("port");
      Integer port = null;
      if (number.isInt() && number.asInt() >= 1 && number.asInt() <= 65535) {
        port = number.asInt();
      } else if (!number.isMissingNode() && !number.isNull()) {
        skips.add(new Skip(slice, "bad_port", "port " + number + " of " + p.path("name")
            + " (expected: 1..65535 or absent)"));
        continue;
      }
      JsonNode name = p.path("name");
      JsonNode protocol = p.path("protocol");
      ports.add(new Slice.Port(name.isTextual() ? name.asText() : "", port,
          protocol.isTextual() ? protocol.asText() : "TCP"));
    }
    return List.copyOf(ports);
  }

  private static Slice.@Nullable Endpoint endpoint(String slice, int index, JsonNode e, Slice.AddressType type,
      List<Skip> skips) {
    String where = slice + "/endpoints[" + index + "]";
    if (!e.isObject()) {
      skips.add(new Skip(where, "malformed_endpoint", "an endpoint that is not a JSON object"));
      return null;
    }
    JsonNode addresses = e.path("addresses");
    if (!addresses.isArray() || addresses.isEmpty() || !addresses.get(0).isTextual()) {
      skips.add(new Skip(where, "no_address", "addresses " + addresses + " (expected: 1..100 address strings)"));
      return null;
    }
    String address = addresses.get(0).asText();
    if (!validAddress(address, type)) {
      skips.add(new Skip(slice + "/" + address, "bad_address", "\"" + address + "\" is not an "
          + (type == Slice.AddressType.IPV4 ? "IPv4" : "IPv6") + " address"));
      return null;
    }
    JsonNode conditions = e.path("conditions");
    List<String> forZones = new ArrayList<>();
    for (JsonNode z : e.path("hints").path("forZones")) {
      String zone = z.path("name").asText("");
      if (!zone.isEmpty()) {
        forZones.add(zone);
      }
    }
    JsonNode ref = e.path("targetRef");
    boolean pod = "Pod".equals(ref.path("kind").asText(""));
    return new Slice.Endpoint(address, bool(conditions.path("ready")), bool(conditions.path("serving")),
        bool(conditions.path("terminating")), e.path("zone").asText(""), e.path("nodeName").asText(""),
        pod ? ref.path("name").asText("") : "", pod ? ref.path("uid").asText("") : "", List.copyOf(forZones));
  }

  /** A JSON boolean, else null (absent, null, or of another type: the API's default then applies). */
  private static @Nullable Boolean bool(JsonNode node) {
    return node.isBoolean() ? node.asBoolean() : null;
  }

  /**
   * True if {@code address} is a literal of the slice's family. IPv6 goes through the JDK's literal parser
   * only after a character check, so a name can never cause a DNS lookup.
   */
  static boolean validAddress(String address, Slice.AddressType type) {
    if (type == Slice.AddressType.IPV4) {
      return IPV4.matcher(address).matches();
    }
    if (!IPV6_CHARS.matcher(address).matches() || address.indexOf(':') < 0) {
      return false;
    }
    try {
      return java.net.InetAddress.getByName(address) instanceof java.net.Inet6Address;
    } catch (java.net.UnknownHostException e) {
      return false;
    }
  }
}
