package dev.fairway.lb.consul;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

/**
 * Serf's distance formula against Serf's own test values ({@code coordinate_test.go},
 * {@code TestCoordinate_DistanceTo}: three dimensions, minimum height 0), and the reading of
 * {@code Coord} objects one by one.
 */
class NetworkCoordinateTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  private static NetworkCoordinate coord(double adjustment, double height, double... vec) {
    return new NetworkCoordinate(vec, 1.5, adjustment, height);
  }

  @Test
  void distance_matchesSerfsTestValues() {
    NetworkCoordinate c1 = coord(0, 0, -0.5, 1.3, 2.4);
    NetworkCoordinate c2 = coord(0, 0, 1.2, -2.3, 3.4);

    assertThat(c1.distanceSeconds(c1)).isEqualTo(0.0);
    assertThat(c1.distanceSeconds(c2)).isEqualTo(c2.distanceSeconds(c1));
    assertThat(c1.distanceSeconds(c2)).isEqualTo(4.104875150354758);
  }

  @Test
  void distance_ignoresAnAdjustmentThatWouldMakeItNegative() {
    NetworkCoordinate c1 = coord(-1.0e6, 0, -0.5, 1.3, 2.4);
    NetworkCoordinate c2 = coord(0, 0, 1.2, -2.3, 3.4);

    assertThat(c1.distanceSeconds(c2)).isEqualTo(4.104875150354758);
  }

  @Test
  void distance_addsPositiveAdjustmentsAndBothHeights() {
    NetworkCoordinate adjusted1 = coord(0.1, 0, -0.5, 1.3, 2.4);
    NetworkCoordinate adjusted2 = coord(0.2, 0, 1.2, -2.3, 3.4);
    assertThat(adjusted1.distanceSeconds(adjusted2)).isCloseTo(4.104875150354758 + 0.3,
        org.assertj.core.data.Offset.offset(1e-15));

    NetworkCoordinate c1 = coord(0.1, 0.7, -0.5, 1.3, 2.4);
    NetworkCoordinate c2 = coord(0.2, 0.1, 1.2, -2.3, 3.4);
    // Serf's test writes 4.104875150354758+0.3+0.8, a Go constant summed exactly; summed in float64 as the
    // formula does, the result is one ulp below it (5.2048751503547575). Serf compares within 1e-6.
    assertThat(c1.distanceSeconds(c2)).isCloseTo(5.204875150354758, org.assertj.core.data.Offset.offset(1e-15));
    assertThat(Math.abs(c1.distanceSeconds(c2) - 5.204875150354758)).isLessThanOrEqualTo(Math.ulp(5.2));
  }

  @Test
  void distance_ofDifferentDimensions_isRefused_asSerfPanics() {
    NetworkCoordinate c1 = coord(0, 0, -0.5, 1.3, 2.4);
    NetworkCoordinate bad = coord(0, 0, -0.5, 1.3, 2.4, 0);

    assertThat(c1.compatibleWith(bad)).isFalse();
    assertThatThrownBy(() -> c1.distanceSeconds(bad)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("dimensions: 3 and 4 (expected: equal)");
  }

  @Test
  void quantise_roundsToTheNearestTenthOfAMillisecond() {
    assertThat(NetworkCoordinates.quantise(4.104875150354758)).isEqualTo(4_104_900_000L);
    assertThat(NetworkCoordinates.quantise(5.204875150354758)).isEqualTo(5_204_900_000L);
    assertThat(NetworkCoordinates.quantise(0.000_849_9)).isEqualTo(800_000L);
    assertThat(NetworkCoordinates.quantise(0.000_850_1)).isEqualTo(900_000L);
    assertThat(NetworkCoordinates.quantise(0.000_049)).isEqualTo(0L);
    assertThat(NetworkCoordinates.quantise(1e12)).isEqualTo(Long.MAX_VALUE);
  }

  @Test
  void parse_readsConsulsCoordShape() throws Exception {
    NetworkCoordinate.Parsed p = NetworkCoordinate.parse(JSON.readTree(
        "{\"Adjustment\":-0.00012,\"Error\":0.263,\"Height\":0.0000181,\"Vec\":[0.0011,-0.0002,0,0,0,0,0,0.0004]}"));

    assertThat(p.problem()).isNull();
    assertThat(p.coordinate().dimensions()).isEqualTo(8);
    assertThat(p.coordinate().error()).isEqualTo(0.263);
  }

  @Test
  void parse_namesWhatIsWrong_neverThrows() throws Exception {
    assertThat(problem("null")).isEqualTo("coordinate_missing");
    assertThat(problem("{\"Error\":1.5,\"Adjustment\":0,\"Height\":0}")).isEqualTo("coordinate_malformed");
    assertThat(problem("{\"Vec\":[],\"Error\":1.5,\"Adjustment\":0,\"Height\":0}")).isEqualTo("coordinate_malformed");
    assertThat(problem("{\"Vec\":[0,\"x\"],\"Error\":1.5,\"Adjustment\":0,\"Height\":0}"))
        .isEqualTo("coordinate_malformed");
    assertThat(problem("{\"Vec\":[0,null],\"Error\":1.5,\"Adjustment\":0,\"Height\":0}"))
        .isEqualTo("coordinate_malformed");
    assertThat(problem("{\"Vec\":[0,1e400],\"Error\":1.5,\"Adjustment\":0,\"Height\":0}"))
        .as("an overflowing number is infinite, which Serf's IsValid rejects").isEqualTo("coordinate_malformed");
    assertThat(problem("{\"Vec\":[0,0],\"Error\":1.5,\"Adjustment\":\"0\",\"Height\":0}"))
        .isEqualTo("coordinate_malformed");
    assertThat(problem("{\"Vec\":[0,0],\"Error\":1.5,\"Adjustment\":0}")).isEqualTo("coordinate_malformed");
    assertThat(problem("[0,0]")).isEqualTo("coordinate_malformed");
    assertThat(problem("{\"Vec\":[0,0],\"Error\":0.2,\"Adjustment\":0,\"Height\":-0.01}"))
        .as("a negative height (fuzzing found it giving a negative round trip)").isEqualTo("coordinate_malformed");
    assertThat(NetworkCoordinate.parse(JSON.missingNode()).problem()).isEqualTo("coordinate_missing");
  }

  private static String problem(String json) throws Exception {
    JsonNode n = JSON.readTree(json);
    return NetworkCoordinate.parse(n).problem();
  }
}
