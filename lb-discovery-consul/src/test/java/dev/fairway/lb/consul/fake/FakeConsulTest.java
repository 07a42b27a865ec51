package dev.fairway.lb.consul.fake;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The fake itself speaks Consul's HTTP API as documented. */
class FakeConsulTest {
  private final FakeConsul fake = FakeConsul.start();
  private final OkHttpClient http = new OkHttpClient.Builder().readTimeout(Duration.ofSeconds(5)).build();

  @AfterEach
  void stop() {
    fake.close();
    http.dispatcher().executorService().shutdown();
    http.connectionPool().evictAll();
  }

  private Response get(String pathAndQuery) throws Exception {
    return http.newCall(new Request.Builder().url(fake.url() + pathAndQuery).build()).execute();
  }

  @Test
  void unknownService_is200EmptyArray_withGoSpelledHeaders() throws Exception {
    try (Response r = get("/v1/health/service/nobody")) {
      assertThat(r.code()).isEqualTo(200);
      assertThat(r.body().string()).isEqualTo("[]");
      assertThat(Long.parseLong(r.header("X-Consul-Index"))).isGreaterThanOrEqualTo(1);
      assertThat(r.headers().names()).contains("X-Consul-Index", "X-Consul-Knownleader", "X-Consul-Lastcontact");
    }
  }

  @Test
  void badParameters_getConsulsErrorTexts() throws Exception {
    try (Response r = get("/v1/health/service/x?index=abc")) {
      assertThat(r.code()).isEqualTo(400);
      assertThat(r.body().string()).isEqualTo("Invalid index");
    }
    try (Response r = get("/v1/health/service/x?index=1&wait=5x")) {
      assertThat(r.code()).isEqualTo(400);
      assertThat(r.body().string()).isEqualTo("Invalid wait time");
    }
    try (Response r = get("/v1/health/service/x?dc=mars")) {
      assertThat(r.code()).isEqualTo(500);
      assertThat(r.body().string()).isEqualTo("No path to datacenter");
    }
  }

  @Test
  void blockingQuery_returnsOnChange_orAfterWaitPlusJitter() throws Exception {
    fake.register("s", Instance.of("a", "10.0.0.1", 80));
    long index = fake.index("s");

    long t0 = System.nanoTime();
    try (Response r = get("/v1/health/service/s?index=" + index + "&wait=500ms")) {
      long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
      assertThat(ms).isBetween(480L, 2000L);
      assertThat(r.header("X-Consul-Index")).isEqualTo(Long.toString(index));
    }

    Thread changer = new Thread(() -> {
      try {
        Thread.sleep(200);
      } catch (InterruptedException e) {
        return;
      }
      fake.register("s", Instance.of("b", "10.0.0.2", 80));
    });
    changer.start();
    t0 = System.nanoTime();
    try (Response r = get("/v1/health/service/s?index=" + index + "&wait=5s")) {
      long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
      assertThat(ms).isBetween(150L, 2000L);
      assertThat(Long.parseLong(r.header("X-Consul-Index"))).isGreaterThan(index);
      assertThat(r.body().string()).contains("\"ID\":\"b\"");
    }
    changer.join(2000);
  }

  @Test
  void passingAndTags_filter() throws Exception {
    fake.register("s", Instance.of("a", "10.0.0.1", 80).withTags("v1", "eu"));
    fake.register("s", Instance.of("b", "10.0.0.2", 80).withTags("v1").withStatus("warning"));
    try (Response r = get("/v1/health/service/s?passing")) {
      String body = r.body().string();
      assertThat(body).contains("\"ID\":\"a\"").doesNotContain("\"ID\":\"b\"");
    }
    try (Response r = get("/v1/health/service/s?passing=false&tag=v1")) {
      assertThat(r.body().string()).contains("\"ID\":\"a\"").contains("\"ID\":\"b\"");
    }
    try (Response r = get("/v1/health/service/s?tag=v1&tag=eu")) {
      assertThat(r.body().string()).contains("\"ID\":\"a\"").doesNotContain("\"ID\":\"b\"");
    }
    try (Response r = get("/v1/health/service/s?passing=maybe")) {
      assertThat(r.code()).isEqualTo(400);
    }
    try (Response r = get("/v1/health/service/s?tag=V1&tag=EU")) {
      assertThat(r.body().string()).as("tags match case-insensitively").contains("\"ID\":\"a\"")
          .doesNotContain("\"ID\":\"b\"");
    }
  }

  @Test
  void waitOfZeroOrBelow_meansTheFiveMinuteDefault() throws Exception {
    fake.register("s", Instance.of("a", "10.0.0.1", 80));
    long index = fake.index("s");
    for (String wait : new String[] {"0s", "-1s"}) {
      Thread changer = new Thread(() -> {
        try {
          Thread.sleep(300);
        } catch (InterruptedException e) {
          return;
        }
        fake.touch("s");
      });
      changer.start();
      long t0 = System.nanoTime();
      try (Response r = get("/v1/health/service/s?index=" + fake.index("s") + "&wait=" + wait)) {
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertThat(ms).as("blocked until the change, not answered at once (wait=" + wait + ")").isGreaterThanOrEqualTo(250);
        assertThat(Long.parseLong(r.header("X-Consul-Index"))).isGreaterThan(index);
      }
      changer.join(2000);
    }
  }

  @Test
  void acls_anonymousOrWithoutRead_isFiltered200_unknownTokenIs403() throws Exception {
    fake.requireToken("t0ken");
    fake.addTokenWithoutRead("weak");
    fake.register("s", Instance.of("a", "10.0.0.1", 80));
    try (Response r = get("/v1/health/service/s")) {
      assertThat(r.code()).isEqualTo(200);
      assertThat(r.header("X-Consul-Results-Filtered-By-ACLs")).isEqualTo("true");
      assertThat(r.body().string()).isEqualTo("[]");
    }
    try (Response r = http.newCall(new Request.Builder().url(fake.url() + "/v1/health/service/s")
        .header("X-Consul-Token", "weak").build()).execute()) {
      assertThat(r.code()).isEqualTo(200);
      assertThat(r.header("X-Consul-Results-Filtered-By-ACLs")).isEqualTo("true");
      assertThat(r.body().string()).isEqualTo("[]");
    }
    try (Response r = http.newCall(new Request.Builder().url(fake.url() + "/v1/health/service/s")
        .header("X-Consul-Token", "nope").build()).execute()) {
      assertThat(r.code()).isEqualTo(403);
      assertThat(r.body().string()).isEqualTo("ACL not found");
    }
    try (Response r = http.newCall(new Request.Builder().url(fake.url() + "/v1/health/service/s")
        .header("X-Consul-Token", "t0ken").build()).execute()) {
      assertThat(r.code()).isEqualTo(200);
      assertThat(r.header("X-Consul-Results-Filtered-By-ACLs")).isNull();
      assertThat(r.body().string()).contains("\"ID\":\"a\"");
    }
  }

  @Test
  void close_wakesABlockedRequest() throws Exception {
    long index = fake.index("s");
    Thread client = new Thread(() -> {
      try (Response r = get("/v1/health/service/s?index=" + index + "&wait=10m")) {
        r.body().string();
      } catch (Exception expected) {
        // the connection goes away with the fake
      }
    });
    client.start();
    Thread.sleep(200);
    long t0 = System.nanoTime();
    fake.close();
    client.join(5000);
    assertThat(client.isAlive()).isFalse();
    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0)).isLessThan(5000);
  }

  @Test
  void coordinateNodes_listsEveryNodeSortedInConsulsShape_underTheCoordinateIndex() throws Exception {
    fake.setCoordinate("n2", new double[] {0.002, 0}, 0.3, -0.0001, 0.00002);
    fake.setCoordinate("n1", new double[] {0.001, 0}, 0.2, 0, 0.00001);
    try (Response r = get("/v1/coordinate/nodes")) {
      assertThat(r.code()).isEqualTo(200);
      assertThat(r.body().string()).isEqualTo("[{\"Node\":\"n1\",\"Segment\":\"\",\"Coord\":{\"Vec\":[0.001,0.0],"
          + "\"Error\":0.2,\"Adjustment\":0.0,\"Height\":1.0E-5}},{\"Node\":\"n2\",\"Segment\":\"\",\"Coord\":"
          + "{\"Vec\":[0.002,0.0],\"Error\":0.3,\"Adjustment\":-1.0E-4,\"Height\":2.0E-5}}]");
      assertThat(r.header("X-Consul-Index")).isEqualTo(Long.toString(fake.coordinateIndex()));
      assertThat(r.headers().names()).contains("X-Consul-Knownleader", "X-Consul-Lastcontact");
    }
    try (Response r = get("/v1/coordinate/nodes?segment=alpha")) {
      assertThat(r.body().string()).as("?segment filters on the segment name").isEqualTo("[]");
    }
    try (Response r = get("/v1/coordinate/nodes?dc=mars")) {
      assertThat(r.code()).isEqualTo(500);
      assertThat(r.body().string()).isEqualTo("No path to datacenter");
    }
    try (Response r = get("/v1/coordinate/nodes?index=abc")) {
      assertThat(r.code()).isEqualTo(400);
      assertThat(r.body().string()).isEqualTo("Invalid index");
    }
  }

  @Test
  void coordinateNodes_blocksUntilACoordinateChanges_notOnOtherChanges() throws Exception {
    fake.setCoordinate("n1", new double[] {0.001, 0}, 0.2, 0, 0.00001);
    long index = fake.coordinateIndex();
    Thread changer = new Thread(() -> {
      try {
        Thread.sleep(150);
        fake.register("s", Instance.of("a", "10.0.0.1", 80)); // a health change: not a coordinate change
        Thread.sleep(150);
        fake.setCoordinate("n1", new double[] {0.002, 0}, 0.2, 0, 0.00001);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    });
    changer.start();
    long t0 = System.nanoTime();
    try (Response r = get("/v1/coordinate/nodes?stale&index=" + index + "&wait=5s")) {
      long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
      assertThat(ms).isBetween(250L, 2000L);
      assertThat(Long.parseLong(r.header("X-Consul-Index"))).isGreaterThan(index);
      assertThat(r.body().string()).contains("[0.002,0.0]");
    }
    changer.join(2000);
    try (Response r = get("/v1/coordinate/nodes?index=" + fake.coordinateIndex() + "&wait=300ms")) {
      assertThat(r.header("X-Consul-Index")).as("a timed-out wait answers the same index")
          .isEqualTo(Long.toString(fake.coordinateIndex()));
    }
  }

  @Test
  void agentSelf_namesTheNodeAndItsCoordinate_andNeedsAgentRead() throws Exception {
    fake.agentNode("agent-one");
    fake.setCoordinate("agent-one", new double[] {0.001, 0}, 0.2, 0, 0.00001);
    try (Response r = get("/v1/agent/self")) {
      String body = r.body().string();
      assertThat(r.code()).isEqualTo(200);
      assertThat(body).contains("\"NodeName\":\"agent-one\"", "\"Datacenter\":\"dc1\"", "\"SegmentName\":\"\"",
          "\"Coord\":{\"Vec\":[0.001,0.0]", "\"Member\":{\"Name\":\"agent-one\"");
    }
    fake.requireToken("admin");
    fake.addTokenWithoutRead("reader");
    try (Response r = http.newCall(new Request.Builder().url(fake.url() + "/v1/agent/self")
        .header("X-Consul-Token", "reader").build()).execute()) {
      assertThat(r.code()).isEqualTo(403);
      assertThat(r.body().string()).isEqualTo("Permission denied");
    }
    try (Response r = http.newCall(new Request.Builder().url(fake.url() + "/v1/coordinate/nodes")
        .header("X-Consul-Token", "reader").build()).execute()) {
      assertThat(r.code()).as("node:read filters, as for health").isEqualTo(200);
      assertThat(r.header("X-Consul-Results-Filtered-By-ACLs")).isEqualTo("true");
      assertThat(r.body().string()).isEqualTo("[]");
    }
  }

  @Test
  void disableCoordinates_isANullCoordAnd401() throws Exception {
    fake.setCoordinate("agent-one", new double[] {0.001, 0}, 0.2, 0, 0.00001);
    fake.disableCoordinates();
    try (Response r = get("/v1/agent/self")) {
      assertThat(r.body().string()).contains("\"Coord\":null");
    }
    try (Response r = get("/v1/coordinate/nodes")) {
      assertThat(r.code()).isEqualTo(401);
      assertThat(r.body().string()).isEqualTo("Coordinate support disabled");
    }
  }
}
