package dev.fairway.lb.consul;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.type.TypeReference;
import dev.fairway.lb.Target;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.kiwiproject.consul.model.health.ServiceHealth;
import org.kiwiproject.consul.util.Jackson;

class HealthMapperTest {
  private static final TypeReference<List<ServiceHealth>> LIST = new TypeReference<>() {};

  static String fixture() throws IOException {
    try (InputStream in = HealthMapperTest.class.getResourceAsStream("/health-service-redis.json")) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  static List<ServiceHealth> parse(String json) throws IOException {
    return Jackson.MAPPER.readValue(json, LIST);
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

    assertThat(m.targets()).extracting(Target::id).containsExactly("redis", "redis-2", "redis-3");
    Target redis = m.targets().get(0);
    assertThat(redis.authority()).isEqualTo("10.1.10.12:8000");
    assertThat(redis.weight()).isEqualTo(10);
    assertThat(redis.metadata()).isEqualTo(Map.of("redis_version", "4.0", "tags", "primary"));
    Target redis2 = m.targets().get(1);
    assertThat(redis2.host()).as("empty Service.Address falls back to Node.Address").isEqualTo("10.1.10.13");
    assertThat(redis2.port()).isEqualTo(8000);
    assertThat(redis2.weight()).isEqualTo(1);
    assertThat(redis2.metadata()).as("Meta null, no tags").isEmpty();
    Target redis3 = m.targets().get(2);
    assertThat(redis3.authority()).isEqualTo("10.1.10.14:8001");
    assertThat(redis3.weight()).as("warning -> Weights.Warning").isEqualTo(1);
    assertThat(redis3.metadata()).containsEntry("tags", "replica");
    assertThat(m.warning()).isEqualTo(1);
    assertThat(m.skipped()).isEmpty();
  }

  @Test
  void fixture_passingOnly_dropsTheWarningInstance() throws IOException {
    HealthMapper.Mapped m = new HealthMapper("zone", true).map(parse(fixture()));

    assertThat(m.targets()).extracting(Target::id).containsExactly("redis", "redis-2");
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

    assertThat(t).extracting(Target::id).containsExactly("n", "p", "w");
    assertThat(t).extracting(Target::weight).containsExactly(1, 7, 2);
  }

  @Test
  void critical_nodeCheck_maintenance_andUnknownStatus_areDropped() throws IOException {
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

    assertThat(m.targets()).extracting(Target::id).containsExactly("e");
    assertThat(m.critical()).isEqualTo(4);
    assertThat(m.skipped()).isEmpty();
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

    assertThat(m.targets()).extracting(Target::id).containsExactly("good");
    assertThat(m.skipped()).extracting(HealthMapper.Skip::key, HealthMapper.Skip::reason).containsExactly(
        org.assertj.core.groups.Tuple.tuple("port0", "bad_port"),
        org.assertj.core.groups.Tuple.tuple("portnull", "bad_port"),
        org.assertj.core.groups.Tuple.tuple("port70000", "bad_port"),
        org.assertj.core.groups.Tuple.tuple("noaddr", "no_address"),
        org.assertj.core.groups.Tuple.tuple("w0", "zero_weight"),
        org.assertj.core.groups.Tuple.tuple("wneg", "bad_weight"),
        org.assertj.core.groups.Tuple.tuple("whuge", "bad_weight"),
        org.assertj.core.groups.Tuple.tuple("space", "bad_address"),
        org.assertj.core.groups.Tuple.tuple("#9", "incomplete"));
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
  void duplicateServiceIds_onDifferentNodes_areQualifiedWithTheNode_andRepeatsSkipped() throws IOException {
    String json = "["
        + entry("n1", "10.0.0.1", "\"ID\":\"web\",\"Service\":\"s\",\"Address\":\"\",\"Port\":80", "passing") + ","
        + entry("n2", "10.0.0.2", "\"ID\":\"web\",\"Service\":\"s\",\"Address\":\"\",\"Port\":80", "passing") + ","
        + entry("n2", "10.0.0.2", "\"ID\":\"web\",\"Service\":\"s\",\"Address\":\"\",\"Port\":80", "passing") + ","
        + entry("n3", "10.0.0.3", "\"ID\":\"api\",\"Service\":\"s\",\"Address\":\"\",\"Port\":80", "passing") + "]";

    HealthMapper.Mapped m = new HealthMapper("zone", false).map(parse(json));

    assertThat(m.targets()).extracting(Target::id).containsExactly("api", "web@n1", "web@n2");
    assertThat(m.skipped()).extracting(HealthMapper.Skip::reason).containsExactly("duplicate");
  }

  @Test
  void reorderedEntries_giveTheSameList() throws IOException {
    List<ServiceHealth> entries = parse(fixture());
    List<ServiceHealth> reversed = new java.util.ArrayList<>(entries);
    java.util.Collections.reverse(reversed);
    HealthMapper mapper = new HealthMapper("zone", false);

    assertThat(mapper.map(reversed).targets()).isEqualTo(mapper.map(entries).targets());
    assertThat(ConsulTargetSource.sameTargets(mapper.map(reversed).targets(), mapper.map(entries).targets())).isTrue();
  }
}
