package dev.fairway.samples.lab;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.opentest4j.TestAbortedException;

/** The skip-here, fail-under-CI rule for tools Maven cannot fetch, on fake PATHs and environments. */
class ExternalToolTest {
  @TempDir Path dir;

  private Path fakeTool(String name) throws Exception {
    Path bin = Files.createDirectories(dir.resolve("bin"));
    return Files.createFile(bin.resolve(name), PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-xr-x")));
  }

  @Test
  void require_findsTheToolOnThePath() throws Exception {
    Path tool = fakeTool("chromium");
    Path found = ExternalTool.require("chromium", "chromium",
        Map.of("PATH", dir.resolve("empty") + ":" + tool.getParent()), new Properties());
    assertThat(found).isEqualTo(tool);
  }

  @Test
  void require_missingTool_skipsAndNamesThePackage() {
    assertThatThrownBy(() -> ExternalTool.require("chromium", "chromium", Map.of("PATH", dir.toString()), new Properties()))
        .isInstanceOf(TestAbortedException.class)
        .hasMessageContaining("chromium is not on the PATH (" + dir + ")")
        .hasMessageContaining("apt-get install chromium");
  }

  @Test
  void require_missingToolUnderCi_fails() {
    assertThatThrownBy(() -> ExternalTool.require("chromium", "chromium",
            Map.of("PATH", dir.toString(), "CI", "true"), new Properties()))
        .isExactlyInstanceOf(AssertionError.class)
        .hasMessage("chromium is not on the PATH (" + dir + "); CI=true needs it (apt-get install chromium, as .ci/run does)");
  }

  @Test
  void require_nonExecutableFile_countsAsMissing() throws Exception {
    Files.createFile(Files.createDirectories(dir.resolve("bin")).resolve("nginx"));
    assertThatThrownBy(() -> ExternalTool.require("nginx", "nginx-light",
            Map.of("PATH", dir.resolve("bin").toString()), new Properties()))
        .isInstanceOf(TestAbortedException.class)
        .hasMessageContaining("apt-get install nginx-light");
  }

  @Test
  void require_propertyOverride_replacesThePathLookup() throws Exception {
    Path tool = fakeTool("chromium");
    Properties props = new Properties();
    props.setProperty("fairway.tool.chromium", dir.resolve("missing").toString());
    // On the PATH, but the override points elsewhere: the override wins, so this is a skip.
    assertThatThrownBy(() -> ExternalTool.require("chromium", "chromium", Map.of("PATH", tool.getParent().toString()), props))
        .isInstanceOf(TestAbortedException.class)
        .hasMessageContaining("-Dfairway.tool.chromium=" + dir.resolve("missing") + " is not an executable file");
    props.setProperty("fairway.tool.chromium", tool.toString());
    assertThat(ExternalTool.require("chromium", "chromium", Map.of(), props)).isEqualTo(tool);
  }
}
