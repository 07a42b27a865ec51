package dev.fairway.samples.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.consul.ConsulTargetSource;
import dev.fairway.lb.dns.DnsTargetSource;
import dev.fairway.lb.hc5.FairwayHttpClient5;
import dev.fairway.lb.jdk.FairwayHttpClient;
import dev.fairway.lb.kubernetes.KubernetesTargetSource;
import dev.fairway.lb.okhttp.LoadBalancingInterceptor;
import dev.fairway.samples.api.fixture.Widget;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The public API of the library modules, compared with the listings committed under
 * {@code samples/src/test/resources/api/}. An accidental addition or removal fails here; a deliberate
 * one is rewritten with {@link #UPDATE_COMMAND} and shows up as a diff in review.
 */
class ApiSurfaceTest {
  static final String UPDATE_COMMAND =
      "mvn -B -q test -pl samples -am -Dtest=ApiSurfaceTest -Dsurefire.failIfNoSpecifiedTests=false -Dfairway.api.update=true";

  /** Surefire runs tests in the module's directory and says so in "basedir". */
  private static final Path LISTINGS = Path.of(System.getProperty("basedir", "."), "src", "test", "resources", "api");

  @Test
  void lbCore_publicApiIsTheCommittedOne() throws IOException {
    check("lb-core", LoadBalancer.class);
  }

  @Test
  void lbOkhttp_publicApiIsTheCommittedOne() throws IOException {
    check("lb-okhttp", LoadBalancingInterceptor.class);
  }

  @Test
  void lbJdkHttpclient_publicApiIsTheCommittedOne() throws IOException {
    check("lb-jdk-httpclient", FairwayHttpClient.class);
  }

  @Test
  void lbApacheHttpclient5_publicApiIsTheCommittedOne() throws IOException {
    check("lb-apache-httpclient5", FairwayHttpClient5.class);
  }

  @Test
  void lbDiscoveryConsul_publicApiIsTheCommittedOne() throws IOException {
    check("lb-discovery-consul", ConsulTargetSource.class);
  }

  @Test
  void lbDiscoveryDns_publicApiIsTheCommittedOne() throws IOException {
    check("lb-discovery-dns", DnsTargetSource.class);
  }

  @Test
  void lbDiscoveryKubernetes_publicApiIsTheCommittedOne() throws IOException {
    check("lb-discovery-kubernetes", KubernetesTargetSource.class);
  }

  private static void check(String module, Class<?> anchor) throws IOException {
    List<String> actual = ApiSurface.of(anchor);
    Path file = LISTINGS.resolve(module + ".txt");
    if (Boolean.getBoolean("fairway.api.update")) {
      Files.createDirectories(LISTINGS);
      Files.write(file, actual, StandardCharsets.UTF_8);
      System.out.println("rewrote " + file + " (" + actual.size() + " lines)");
      return;
    }
    List<String> expected = Files.exists(file) ? Files.readAllLines(file, StandardCharsets.UTF_8) : List.of();
    List<String> diff = ApiSurface.diff(expected, actual);
    if (!diff.isEmpty()) {
      throw new AssertionError("The public API of " + module + " is not the one in samples/src/test/resources/api/"
          + module + ".txt (- committed, + compiled now):\n" + String.join("\n", diff)
          + "\nIf the change is deliberate, rewrite the listings and commit them:\n  " + UPDATE_COMMAND);
    }
  }

  @Test
  void listing_hasPublicAndProtectedMembersOfVisibleTypesOnly() {
    // Sorted as strings, so "public T" comes before "public dev...". Not listed: package-private and
    // private members, Hidden, Base itself, Internal, the anonymous Runnable.
    String w = "dev.fairway.samples.api.fixture.Widget";
    assertThat(ApiSurface.of(Widget.class)).containsExactly(
        "public final class " + w + "<T extends java.lang.Comparable<T>> implements java.util.function.Supplier<T>",
        "  public T " + w + ".get()",
        "  public " + w + "()",
        "  public java.util.List<java.lang.String> " + w + ".names(java.lang.String...) throws java.io.IOException",
        "  public static final int " + w + ".LIMIT",
        "public static final class " + w + "$Child extends " + w + "$Base",
        "  public " + w + "$Child()",
        "  public void " + w + "$Base.inherited()",
        "public static interface " + w + "$Listener",
        "  public default void " + w + "$Listener.changed()",
        "public static enum " + w + "$Mode",
        "  public static " + w + "$Mode " + w + "$Mode.valueOf(java.lang.String)",
        "  public static " + w + "$Mode[] " + w + "$Mode.values()",
        "  public static final " + w + "$Mode " + w + "$Mode.OFF",
        "  public static final " + w + "$Mode " + w + "$Mode.ON",
        "public static record " + w + "$Pair",
        "  public " + w + "$Pair(java.lang.String,int)",
        "  public final boolean " + w + "$Pair.equals(java.lang.Object)",
        "  public final int " + w + "$Pair.hashCode()",
        "  public final java.lang.String " + w + "$Pair.toString()",
        "  public int " + w + "$Pair.right()",
        "  public java.lang.String " + w + "$Pair.left()");
  }

  @Test
  void diff_showsRemovedAndAddedLines() {
    List<String> committed = List.of("public class a.A", "  public void a.A.x()", "  public void a.A.y()");
    List<String> now = List.of("public class a.A", "  public void a.A.y()", "  public void a.A.z(int)");
    assertThat(ApiSurface.diff(committed, now)).containsExactly("- " + committed.get(1), "+ " + now.get(2));
    assertThat(ApiSurface.diff(now, now)).isEmpty();
  }
}
