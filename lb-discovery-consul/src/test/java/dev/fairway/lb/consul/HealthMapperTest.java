package dev.fairway.lb.consul;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import dev.fairway.lb.Target;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.assertj.core.groups.Tuple;

class HealthMapperTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  static String fixture() throws IOException {
    try (InputStream in = HealthMapperTest.class.getResourceAsStream("/health-service-redis.json")) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  static JsonNode parse(String json) throws IOException {
    return JSON.readTree(json);
  }

  /** One entry with a service check in {@code status}; {@code service} is the Service object's JSON body. */
  static String entry(String node, String nodeAddress, String service, String status) {
    return "{\"Node\":{\"Node\":\"" + node + "\",\"Address\":\"" + nodeAddress + "\"},"
        + "\"Service\":{" + service + "},"
        + "\"Checks\":[{\"Node\":\"" + node + "\",\"CheckID\":\"serfHealth\",\"Name\":\"Serf\",\"Status\":\"passing\"},"
        + "{\"Node\":\"" + node + "\",\"CheckID\":\"service:x\",\"Name\":\"svc\",\"Status\":\"" + status + "\"}]}";
  }

  @Test
  void fixture_defaultMode_keepsTheWarningInstanceWithItsWarningWeight() throws IOException {
    HealthMapper.Mapped m = new HealthMapper("zone", false).map(parse(fixture()));

    assertThat(m.targets()).extracting(Target::id).containsExactly("redis-2@node-2", "redis-3@node-3", "redis@foobar");
    Target redis = m.targets().get(2);
    assertThat(redis.authority()).isEqualTo("10.1.10.12:8000");
    assertThat(redis.weight()).isEqualTo(10);
    assertThat(redis.metadata()).isEqualTo(Map.of("redis_version", "4.0", "tags", "primary"));
    Target redis2 = m.targets().get(0);
    assertThat(redis2.host()).as("empty Service.Address falls back to Node.Address").isEqualTo("10.1.10.13");
    assertThat(redis2.port()).isEqualTo(8000);
    assertThat(redis2.weight()).isEqualTo(1);
    assertThat(redis2.metadata()).as("Meta null, no tags").isEmpty();
    Target redis3 = m.targets().get(1);
    assertThat(redis3.authority()).isEqualTo("10.1.10.14:8001");
    assertThat(redis3.weight()).as("warning -> Weights.Warning").isEqualTo(1);
    assertThat(redis3.metadata()).containsEntry("tags", "replica");
    assertThat(m.warning()).isEqualTo(1);
    assertThat(m.skipped()).isEmpty();
  }

  @Test
  void fixture_passingOnly_dropsTheWarningInstance() throws IOException {
    HealthMapper.Mapped m = new HealthMapper("zone", true).map(parse(fixture()));

    assertThat(m.targets()).extracting(Target::id).containsExactly("redis-2@node-2", "redis@foobar");
  }

  @Test
  void zone_comesFromTheConfiguredMetaKey() throws IOException {
    String json = "[" + entry("n1", "10.0.0.1",
        "\"ID\":\"a\",\"Service\":\"s\",\"Address\":\"10.0.0.9\",\"Port\":80,\"Meta\":{\"az\":\"eu-1a\",\"zone\":\"other\"}",
        "passing") + "]";

    assertThat(new HealthMapper("az", false).map(parse(json)).targets().get(0).zone()).isEqualTo("eu-1a");
    assertThat(new HealthMapper("zone", false).map(parse(json)).targets().get(0).zone()).isEqualTo("other");
    assertThat(new HealthMapper("rack", false).map(parse(json)).targets().get(0).zone()).isEmpty();
  }

  @Test
  void weights_passingAndWarningAndAbsent() throws IOException {
    String json = "["
        + entry("n1", "10.0.0.1", "\"ID\":\"p\",\"Service\":\"s\",\"Address\":\"\",\"Port\":80,\"Weights\":{\"Passing\":7,\"Warning\":2}", "passing") + ","
        + entry("n2", "10.0.0.2", "\"ID\":\"w\",\"Service\":\"s\",\"Address\":\"\",\"Port\":80,\"Weights\":{\"Passing\":7,\"Warning\":2}", "warning") + ","
        + entry("n3", "10.0.0.3", "\"ID\":\"n\",\"Service\":\"s\",\"Address\":\"\",\"Port\":80", "warning") + "]";

    List<Target> t = new HealthMapper("zone", false).map(parse(json)).targets();

    assertThat(t).extracting(Target::id).containsExactly("n@n3", "p@n1", "w@n2");
    assertThat(t).extracting(Target::weight).containsExactly(1, 7, 2);
  }

  @Test
  void critical_nodeCheck_maintenance_andUnknownStatus_areKeptAsUnhealthy_orDroppedWhenPassingOnly() throws IOException {
    String nodeCritical = "{\"Node\":{\"Node\":\"n2\",\"Address\":\"10.0.0.2\"},"
        + "\"Service\":{\"ID\":\"b\",\"Service\":\"s\",\"Address\":\"\",\"Port\":80},"
        + "\"Checks\":[{\"Node\":\"n2\",\"CheckID\":\"serfHealth\",\"Name\":\"Serf\",\"Status\":\"critical\"},"
        + "{\"Node\":\"n2\",\"CheckID\":\"service:b\",\"Name\":\"svc\",\"Status\":\"passing\"}]}";
    String maintenance = "{\"Node\":{\"Node\":\"n3\",\"Address\":\"10.0.0.3\"},"
        + "\"Service\":{\"ID\":\"c\",\"Service\":\"s\",\"Address\":\"\",\"Port\":80},"
        + "\"Checks\":[{\"Node\":\"n3\",\"CheckID\":\"_node_maintenance\",\"Name\":\"Node Maintenance Mode\",\"Status\":\"critical\"}]}";
    String json = "["
        + entry("n1", "10.0.0.1", "\"ID\":\"a\",\"Service\":\"s\",\"Address\":\"\",\"Port\":80", "critical") + ","
        + nodeCritical + "," + maintenance + ","
        + entry("n4", "10.0.0.4", "\"ID\":\"d\",\"Service\":\"s\",\"Address\":\"\",\"Port\":80", "bogus") + ","
        + entry("n5", "10.0.0.5", "\"ID\":\"e\",\"Service\":\"s\",\"Address\":\"\",\"Port\":80", "passing") + "]";

    HealthMapper.Mapped m = new HealthMapper("zone", false).map(parse(json));

    assertThat(m.targets()).extracting(Target::id, Target::healthy).containsExactly(
        Tuple.tuple("a@n1", false), Tuple.tuple("b@n2", false), Tuple.tuple("c@n3", false),
        Tuple.tuple("d@n4", false), Tuple.tuple("e@n5", true));
    assertThat(m.critical()).isEqualTo(4);
    assertThat(m.skipped()).isEmpty();

    HealthMapper.Mapped passing = new HealthMapper("zone", true).map(parse(json));
    assertThat(passing.targets()).extracting(Target::id).containsExactly("e@n5");
    assertThat(passing.critical()).isEqualTo(4);
  }

  @Test
  void badEntries_areSkippedWithAReason() throws IOException {
    String json = "["
        + entry("n1", "10.0.0.1", "\"ID\":\"port0\",\"Service\":\"s\",\"Address\":\"\",\"Port\":0", "passing") + ","
        + entry("n2", "10.0.0.2", "\"ID\":\"portnull\",\"Service\":\"s\",\"Address\":\"\",\"Port\":null", "passing") + ","
        + entry("n3", "10.0.0.3", "\"ID\":\"port70000\",\"Service\":\"s\",\"Address\":\"\",\"Port\":70000", "passing") + ","
        + entry("n4", "", "\"ID\":\"noaddr\",\"Service\":\"s\",\"Address\":\"\",\"Port\":80", "passing") + ","
        + entry("n5", "10.0.0.5", "\"ID\":\"w0\",\"Service\":\"s\",\"Address\":\"\",\"Port\":80,\"Weights\":{\"Passing\":0,\"Warning\":0}", "passing") + ","
        + entry("n6", "10.0.0.6", "\"ID\":\"wneg\",\"Service\":\"s\",\"Address\":\"\",\"Port\":80,\"Weights\":{\"Passing\":-3,\"Warning\":1}", "passing") + ","
        + entry("n7", "10.0.0.7", "\"ID\":\"whuge\",\"Service\":\"s\",\"Address\":\"\",\"Port\":80,\"Weights\":{\"Passing\":2000000,\"Warning\":1}", "passing") + ","
        + entry("n8", "10.0.0.8", "\"ID\":\"space\",\"Service\":\"s\",\"Address\":\"bad host\",\"Port\":80", "passing") + ","
        + entry("n9", "10.0.0.9", "\"ID\":\"good\",\"Service\":\"s\",\"Address\":\"\",\"Port\":80", "passing") + ","
        + "null]";

    HealthMapper.Mapped m = new HealthMapper("zone", false).map(parse(json));

    assertThat(m.targets()).extracting(Target::id).containsExactly("good@n9");
    assertThat(m.skipped()).extracting(HealthMapper.Skip::key, HealthMapper.Skip::reason).containsExactly(
        Tuple.tuple("port0@n1", "bad_port"),
        Tuple.tuple("portnull@n2", "bad_port"),
        Tuple.tuple("port70000@n3", "bad_port"),
        Tuple.tuple("noaddr@n4", "no_address"),
        Tuple.tuple("w0@n5", "zero_weight"),
        Tuple.tuple("wneg@n6", "bad_weight"),
        Tuple.tuple("whuge@n7", "bad_weight"),
        Tuple.tuple("space@n8", "bad_address"),
        Tuple.tuple("#9", "incomplete"));
  }

  @Test
  void ipv6_isStoredBareAndBracketedInTheAuthority() throws IOException {
    String json = "["
        + entry("n1", "10.0.0.1", "\"ID\":\"v6\",\"Service\":\"s\",\"Address\":\"2001:db8::7\",\"Port\":8443", "passing") + ","
        + entry("n2", "fd00::2", "\"ID\":\"v6node\",\"Service\":\"s\",\"Address\":\"\",\"Port\":8443", "passing") + "]";

    List<Target> t = new HealthMapper("zone", false).map(parse(json)).targets();

    assertThat(t).extracting(Target::host).containsExactly("2001:db8::7", "fd00::2");
    assertThat(t).extracting(Target::authority).containsExactly("[2001:db8::7]:8443", "[fd00::2]:8443");
  }

  @Test
  void serviceIds_alwaysCarryTheNode_andRepeatsAreSkipped() throws IOException {
    String json = "["
        + entry("n1", "10.0.0.1", "\"ID\":\"web\",\"Service\":\"s\",\"Address\":\"\",\"Port\":80", "passing") + ","
        + entry("n2", "10.0.0.2", "\"ID\":\"web\",\"Service\":\"s\",\"Address\":\"\",\"Port\":80", "passing") + ","
        + entry("n2", "10.0.0.2", "\"ID\":\"web\",\"Service\":\"s\",\"Address\":\"\",\"Port\":80", "passing") + ","
        + entry("n3", "10.0.0.3", "\"ID\":\"api\",\"Service\":\"s\",\"Address\":\"\",\"Port\":80", "passing") + "]";

    HealthMapper.Mapped m = new HealthMapper("zone", false).map(parse(json));

    assertThat(m.targets()).extracting(Target::id).containsExactly("api@n3", "web@n1", "web@n2");
    assertThat(m.skipped()).extracting(HealthMapper.Skip::reason).containsExactly("duplicate");
  }

  @Test
  void reorderedEntries_giveTheSameList() throws IOException {
    JsonNode entries = parse(fixture());
    ArrayNode reversed = JSON.createArrayNode();
    for (int i = entries.size() - 1; i >= 0; i--) {
      reversed.add(entries.get(i));
    }
    HealthMapper mapper = new HealthMapper("zone", false);

    assertThat(mapper.map(reversed).targets()).isEqualTo(mapper.map(entries).targets());
    assertThat(dev.fairway.lb.internal.Targets.sameTargets(mapper.map(reversed).targets(),
        mapper.map(entries).targets())).isTrue();
  }

  @Test
  void nodeTaggedAddresses_inEveryRealShape_doNotCostAnyEntry() throws IOException {
    // {} (catalog-registered node), only lan, IPv6-only, null (old agents), missing: all readable.
    String json = "["
        + node("n1", "\"TaggedAddresses\":{}", "a") + ","
        + node("n2", "\"TaggedAddresses\":{\"lan\":\"10.0.0.2\"}", "b") + ","
        + node("n3", "\"TaggedAddresses\":{\"lan_ipv6\":\"fd00::3\",\"wan_ipv6\":\"fd00::3\"}", "c") + ","
        + node("n4", "\"TaggedAddresses\":null", "d") + ","
        + node("n5", "\"Meta\":{}", "e") + "]";

    HealthMapper.Mapped m = new HealthMapper("zone", false).map(parse(json));

    assertThat(m.targets()).extracting(Target::id).containsExactly("a@n1", "b@n2", "c@n3", "d@n4", "e@n5");
    assertThat(m.skipped()).isEmpty();
  }

  @Test
  void oneUnreadableEntry_isSkipped_andTheOthersArePublished() throws IOException {
    String json = "["
        + node("n1", "\"TaggedAddresses\":{}", "a") + ","
        + "{\"Node\":{\"Node\":\"n2\",\"Address\":\"10.0.0.2\"},\"Service\":{\"ID\":\"b\",\"Port\":\"eighty\","
        + "\"Weights\":\"heavy\",\"Meta\":[1],\"Tags\":\"x\"},\"Checks\":\"none\"},"
        + "{\"Node\":\"n3\",\"Service\":{\"ID\":\"c\",\"Port\":80}},"
        + "{\"Node\":{\"Node\":\"n4\",\"Address\":\"10.0.0.4\"},\"Service\":{\"ID\":\"d\",\"Port\":80,"
        + "\"Weights\":{\"Passing\":1.5}}},"
        + "\"a string\","
        + node("n6", "\"Meta\":{\"zone\":7}", "f") + "]";

    HealthMapper.Mapped m = new HealthMapper("zone", false).map(parse(json));

    assertThat(m.targets()).extracting(Target::id).containsExactly("a@n1", "f@n6");
    assertThat(m.skipped()).extracting(HealthMapper.Skip::key, HealthMapper.Skip::reason).containsExactly(
        Tuple.tuple("b@n2", "bad_port"), Tuple.tuple("#2", "incomplete"), Tuple.tuple("d@n4", "bad_weight"),
        Tuple.tuple("#4", "incomplete"));
  }

  @Test
  void ids_areStableFromTheFirstSight_whenASecondNodeRegistersTheSameServiceId() throws IOException {
    HealthMapper mapper = new HealthMapper("zone", false);
    String first = "[" + entry("n1", "10.0.0.1", "\"ID\":\"web\",\"Port\":80", "passing") + "]";
    String second = "[" + entry("n1", "10.0.0.1", "\"ID\":\"web\",\"Port\":80", "passing") + ","
        + entry("n2", "10.0.0.2", "\"ID\":\"web\",\"Port\":80", "passing") + "]";

    assertThat(mapper.map(parse(first)).targets()).extracting(Target::id).containsExactly("web@n1");
    assertThat(mapper.map(parse(second)).targets()).extracting(Target::id).containsExactly("web@n1", "web@n2");
  }

  private static String node(String node, String nodeFields, String id) {
    return "{\"Node\":{\"Node\":\"" + node + "\",\"Address\":\"10.0.0." + node.substring(1) + "\"," + nodeFields + "},"
        + "\"Service\":{\"ID\":\"" + id + "\",\"Service\":\"s\",\"Address\":\"\",\"Port\":80},"
        + "\"Checks\":[{\"CheckID\":\"serfHealth\",\"Status\":\"passing\"}]}";
  }
}
