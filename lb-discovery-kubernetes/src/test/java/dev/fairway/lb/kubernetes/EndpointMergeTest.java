package dev.fairway.lb.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.fairway.lb.Target;
import dev.fairway.lb.kubernetes.fake.EndpointSliceSpec;
import dev.fairway.lb.kubernetes.fake.EndpointSliceSpec.Endpoint;
import dev.fairway.lb.kubernetes.fake.FakeShapes;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The merge rules on exact inputs: ports, duplicates, dual stack, conditions, hints. */
class EndpointMergeTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  private static Slice slice(EndpointSliceSpec spec) {
    List<Skip> skips = new ArrayList<>();
    Slice s = SliceParser.parse(FakeShapes.json(spec, "shop"), skips);
    assertThat(skips).isEmpty();
    assertThat(s).isNotNull();
    return s;
  }

  private static List<String> ids(EndpointMerge.Merged m) {
    return m.targets().stream().map(Target::id).toList();
  }

  @Test
  void readyEndpointsOnly_whileOneIsReady() {
    Slice s = slice(EndpointSliceSpec.of("orders-a", "orders").port("http", 8080)
        .endpoint(Endpoint.at("10.0.0.1").conditions(true, true, false))
        .endpoint(Endpoint.at("10.0.0.2").conditions(false, true, true))   // draining: serving, terminating
        .endpoint(Endpoint.at("10.0.0.3").conditions(false, false, true))  // terminating, not serving
        .endpoint(Endpoint.at("10.0.0.4").conditions(false, false, false))  // starting, not ready
        .endpoint(Endpoint.at("10.0.0.5")));                                // no conditions: ready
    EndpointMerge.Merged m = EndpointMerge.merge(List.of(s), PortChoice.ONLY, "", false);
    assertThat(ids(m)).containsExactly("10.0.0.1:8080", "10.0.0.5:8080");
    assertThat(m.terminatingFallback()).isFalse();
  }

  @Test
  void servingTerminatingEndpoints_areTheFallbackWhenNoneIsReady() {
    Slice s = slice(EndpointSliceSpec.of("orders-a", "orders").port("http", 8080)
        .endpoint(Endpoint.at("10.0.0.2").conditions(false, true, true))
        .endpoint(Endpoint.at("10.0.0.3").conditions(false, false, true))
        .endpoint(Endpoint.at("10.0.0.4").conditions(false, false, false)));
    EndpointMerge.Merged m = EndpointMerge.merge(List.of(s), PortChoice.ONLY, "", false);
    assertThat(ids(m)).containsExactly("10.0.0.2:8080");
    assertThat(m.terminatingFallback()).isTrue();
    assertThat(m.targets().get(0).metadata()).containsEntry("terminating", "true");
  }

  @Test
  void servingDefaultsToReady_andTerminatingToFalse() {
    Slice s = slice(EndpointSliceSpec.of("orders-a", "orders").port("http", 8080)
        .endpoint(Endpoint.at("10.0.0.2").conditions(false, null, true))); // serving nil = ready = false
    EndpointMerge.Merged m = EndpointMerge.merge(List.of(s), PortChoice.ONLY, "", false);
    assertThat(m.targets()).isEmpty();
  }

  @Test
  void anAddressInTwoSlices_countsOnce_withTheBetterConditions() {
    Slice a = slice(EndpointSliceSpec.of("orders-a", "orders").port("http", 8080)
        .endpoint(Endpoint.at("10.0.0.1").conditions(false, true, true)));
    Slice b = slice(EndpointSliceSpec.of("orders-b", "orders").port("http", 8080)
        .endpoint(Endpoint.at("10.0.0.1").conditions(true, true, false))
        .endpoint(Endpoint.at("10.0.0.2").conditions(true, true, false)));
    EndpointMerge.Merged m = EndpointMerge.merge(List.of(a, b), PortChoice.ONLY, "", false);
    assertThat(ids(m)).containsExactly("10.0.0.1:8080", "10.0.0.2:8080");
  }

  @Test
  void portsByName_byNumber_andTheOnlyOne() {
    Slice s = slice(EndpointSliceSpec.of("orders-a", "orders").port("http", 8080).port("metrics", 9090)
        .port("dns", 53, "UDP").endpoint(Endpoint.at("10.0.0.1")));
    assertThat(ids(EndpointMerge.merge(List.of(s), PortChoice.named("metrics"), "", false)))
        .containsExactly("10.0.0.1:9090");
    assertThat(ids(EndpointMerge.merge(List.of(s), PortChoice.number(8080), "", false)))
        .containsExactly("10.0.0.1:8080");
    assertThat(ids(EndpointMerge.merge(List.of(s), PortChoice.named("dns"), "", false))).isEmpty(); // UDP
    EndpointMerge.Merged ambiguous = EndpointMerge.merge(List.of(s), PortChoice.ONLY, "", false);
    assertThat(ambiguous.targets()).isEmpty();
    assertThat(ambiguous.skips()).extracting(Skip::reason).containsExactly("no_port");

    Slice unnamed = slice(EndpointSliceSpec.of("web-a", "web").port("", 80).endpoint(Endpoint.at("10.0.0.9")));
    assertThat(ids(EndpointMerge.merge(List.of(unnamed), PortChoice.named(""), "", false)))
        .containsExactly("10.0.0.9:80");
    Slice allPorts = slice(EndpointSliceSpec.of("web-b", "web").port("", null).endpoint(Endpoint.at("10.0.0.8")));
    assertThat(ids(EndpointMerge.merge(List.of(allPorts), PortChoice.number(8443), "", false)))
        .containsExactly("10.0.0.8:8443");
    assertThat(ids(EndpointMerge.merge(List.of(allPorts), PortChoice.ONLY, "", false))).isEmpty();
  }

  @Test
  void dualStack_aPodCountsOnce_inThePreferredFamily() {
    Slice v4 = slice(EndpointSliceSpec.of("orders-v4", "orders").port("http", 8080)
        .endpoint(Endpoint.readyPod("10.0.0.1", "orders-1", "z1"))
        .endpoint(Endpoint.readyPod("10.0.0.2", "orders-2", "z1")));
    Slice v6 = slice(EndpointSliceSpec.of("orders-v6", "orders").addressType("IPv6").port("http", 8080)
        .endpoint(Endpoint.readyPod("fd00::1", "orders-1", "z1"))
        .endpoint(Endpoint.readyPod("fd00::3", "orders-3", "z1"))); // only IPv6: stays
    assertThat(ids(EndpointMerge.merge(List.of(v4, v6), PortChoice.ONLY, "", false)))
        .containsExactly("10.0.0.1:8080", "10.0.0.2:8080", "[fd00::3]:8080");
    assertThat(ids(EndpointMerge.merge(List.of(v4, v6), PortChoice.ONLY, "", true)))
        .containsExactly("10.0.0.2:8080", "[fd00::1]:8080", "[fd00::3]:8080");
  }

  @Test
  void zonesAndMetadata_comeFromTheEndpoint() {
    Slice s = slice(EndpointSliceSpec.of("orders-a", "orders").port("http", 8080)
        .endpoint(Endpoint.readyPod("10.0.0.1", "orders-1", "eu-west-1a").nodeName("node-7")));
    Target t = EndpointMerge.merge(List.of(s), PortChoice.ONLY, "", false).targets().get(0);
    assertThat(t.zone()).isEqualTo("eu-west-1a");
    assertThat(t.weight()).isEqualTo(1);
    assertThat(t.metadata()).isEqualTo(Map.of("zone", "eu-west-1a", "node", "node-7", "pod", "orders-1"));
  }

  @Test
  void hints_giveEachTargetTheZoneItIsHintedFor() {
    // The controller moved 10.0.0.2 (in z1) to z2, which had too few endpoints for its share.
    Slice s = slice(EndpointSliceSpec.of("orders-a", "orders").port("http", 8080)
        .endpoint(Endpoint.readyPod("10.0.0.1", "a", "z1").forZones("z1"))
        .endpoint(Endpoint.readyPod("10.0.0.2", "b", "z1").forZones("z2"))
        .endpoint(Endpoint.readyPod("10.0.0.3", "c", "z2").forZones("z2")));
    EndpointMerge.Merged m = EndpointMerge.merge(List.of(s), PortChoice.ONLY, "z2", false);
    assertThat(m.hintsUsed()).isTrue();
    assertThat(m.targets()).extracting(Target::zone).containsExactly("z1", "z2", "z2");
    assertThat(m.targets().get(1).metadata()).containsEntry("zone", "z1");

    EndpointMerge.Merged fromZ1 = EndpointMerge.merge(List.of(s), PortChoice.ONLY, "z1", false);
    assertThat(fromZ1.targets()).extracting(Target::zone).containsExactly("z1", "z2", "z2");
  }

  @Test
  void hints_areIgnored_unlessAllCarryThem_andSomeAreLocal_andTheZoneIsKnown() {
    Slice partly = slice(EndpointSliceSpec.of("orders-a", "orders").port("http", 8080)
        .endpoint(Endpoint.readyPod("10.0.0.1", "a", "z1").forZones("z2"))
        .endpoint(Endpoint.readyPod("10.0.0.2", "b", "z1")));
    EndpointMerge.Merged m = EndpointMerge.merge(List.of(partly), PortChoice.ONLY, "z2", false);
    assertThat(m.hintsUsed()).isFalse();
    assertThat(m.targets()).extracting(Target::zone).containsExactly("z1", "z1");

    Slice noneLocal = slice(EndpointSliceSpec.of("orders-a", "orders").port("http", 8080)
        .endpoint(Endpoint.readyPod("10.0.0.1", "a", "z1").forZones("z1")));
    assertThat(EndpointMerge.merge(List.of(noneLocal), PortChoice.ONLY, "z3", false).hintsUsed()).isFalse();
    assertThat(EndpointMerge.merge(List.of(noneLocal), PortChoice.ONLY, "", false).hintsUsed()).isFalse();
  }

  @Test
  void hints_onANotReadyEndpoint_doNotMatter() {
    Slice s = slice(EndpointSliceSpec.of("orders-a", "orders").port("http", 8080)
        .endpoint(Endpoint.readyPod("10.0.0.1", "a", "z1").forZones("z1"))
        .endpoint(Endpoint.at("10.0.0.2").conditions(false, false, false).zone("z1")));
    assertThat(EndpointMerge.merge(List.of(s), PortChoice.ONLY, "z1", false).hintsUsed()).isTrue();
  }

  @Test
  void parser_skipsFqdnSlices_andBadEndpoints_entryByEntry() {
    List<Skip> skips = new ArrayList<>();
    assertThat(SliceParser.parse(FakeShapes.json(EndpointSliceSpec.of("x-fqdn", "x").addressType("FQDN")
        .port("http", 80).endpoint(Endpoint.at("a.example.com")), "shop"), skips)).isNull();
    assertThat(skips).extracting(Skip::key, Skip::reason).containsExactly(org.assertj.core.groups.Tuple.tuple(
        "x-fqdn", "fqdn"));

    skips.clear();
    ObjectNode noAddresses = JSON.createObjectNode();
    noAddresses.putArray("addresses");
    Slice s = SliceParser.parse(FakeShapes.json(EndpointSliceSpec.of("x-a", "x").port("http", 80)
        .endpoint(Endpoint.at("10.0.0.1"))
        .endpoint(Endpoint.at("10.0.0.256"))
        .endpoint(Endpoint.at("fd00::1"))
        .rawEndpoint(noAddresses)
        .endpoint(Endpoint.at("10.0.0.2")), "shop"), skips);
    assertThat(s).isNotNull();
    assertThat(s.endpoints()).extracting(Slice.Endpoint::address).containsExactly("10.0.0.1", "10.0.0.2");
    assertThat(skips).extracting(Skip::key, Skip::reason).containsExactly(
        org.assertj.core.groups.Tuple.tuple("x-a/10.0.0.256", "bad_address"),
        org.assertj.core.groups.Tuple.tuple("x-a/fd00::1", "bad_address"),
        org.assertj.core.groups.Tuple.tuple("x-a/endpoints[3]", "no_address"));
  }

  @Test
  void parser_readsIpv6_andRefusesNames() {
    assertThat(SliceParser.validAddress("fd00::1", Slice.AddressType.IPV6)).isTrue();
    assertThat(SliceParser.validAddress("2001:db8::8a2e:370:7334", Slice.AddressType.IPV6)).isTrue();
    assertThat(SliceParser.validAddress("10.0.0.1", Slice.AddressType.IPV6)).isFalse();
    assertThat(SliceParser.validAddress("orders.example.com", Slice.AddressType.IPV6)).isFalse();
    assertThat(SliceParser.validAddress("010.0.0.1", Slice.AddressType.IPV4)).isFalse();
    assertThat(SliceParser.validAddress("255.255.255.255", Slice.AddressType.IPV4)).isTrue();
  }
}
